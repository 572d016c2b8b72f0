using System.Text;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>What an internal subscription does with a matching message (see ClientConnection.Imports).</summary>
internal abstract class InternalRoute : Delivery.Receiver
{
    private volatile bool _invalid;

    protected InternalRoute()
        : base(Delivery.ReceiverKind.Import)
    {
    }

    /// <summary>
    /// Go's invalid import: an exporter update withdrew the export or revoked the activation. The route
    /// stays in place (a request still counts as delivered, so no 503) but carries nothing.
    /// </summary>
    public bool Invalid
    {
        get => _invalid;
        set => _invalid = value;
    }

    /// <summary>
    /// Writes the subject the message takes on the other side: the publish subject itself, a
    /// literal, or a token-wise transform. Returns the bytes to use (a slice of
    /// <paramref name="scratch"/> when transformed).
    /// </summary>
    protected static ReadOnlySpan<byte> MapSubject(
        ReadOnlySpan<byte> subject, bool usePublished, byte[] literal, ImportTransform? transform, ref byte[]? scratch)
    {
        if (usePublished)
        {
            return subject;
        }
        if (transform is null)
        {
            return literal;
        }
        var length = transform.Apply(subject, ref scratch);
        return scratch.AsSpan(0, length);
    }

    /// <summary>Go's rule: a wildcard import whose two sides are equal passes the published subject through.</summary>
    protected static (bool UsePublished, ImportTransform? Transform) Plan(string wildcardSide, string from, string to, bool reverseCheck)
    {
        if (!SubjectRules.HasWildcard(wildcardSide))
        {
            return (false, null);
        }
        if (from == to)
        {
            return (true, null);
        }
        return (false, ImportTransform.Create(from, to, out _, reverseCheck));
    }
}

/// <summary>
/// Lives in the exporter's index on the import's subject; delivers to the importer's subscribers
/// under the import's local subject (Go's shadow subscriptions, one per import instead of one per
/// importer subscription).
/// </summary>
internal sealed class StreamImportRoute : InternalRoute
{
    private readonly byte[] _to;
    private readonly bool _usePublished;
    private readonly ImportTransform? _transform;

    public StreamImportRoute(Account importer, ResolvedStreamImport import)
    {
        Importer = importer;
        Import = import;
        _to = Encoding.UTF8.GetBytes(import.To);
        (_usePublished, _transform) = Plan(import.From, import.From, import.To, reverseCheck: false);
    }

    public Account Importer { get; }

    public ResolvedStreamImport Import { get; }

    public ReadOnlySpan<byte> Map(ReadOnlySpan<byte> subject, ref byte[]? scratch) => MapSubject(subject, _usePublished, _to, _transform, ref scratch);
}

/// <summary>
/// Lives in the importer's index on the local subject; sends the request into the exporter on the
/// exported subject, with a reply mapped through the exporter's <see cref="ServiceResponses"/>.
/// </summary>
internal sealed class ServiceImportRoute : InternalRoute
{
    private readonly byte[] _to;
    private readonly bool _usePublished;
    private readonly ImportTransform? _transform;

    public ServiceImportRoute(Account importer, Account exporter, ResolvedServiceImport import, ResolvedServiceExport? export)
    {
        Importer = importer;
        Exporter = exporter;
        Import = import;
        ResponseType = export?.ResponseType ?? ServiceResponseType.Singleton;
        ResponseThreshold = export?.ResponseThreshold ?? ResolvedServiceExport.DefaultResponseThreshold;
        _to = Encoding.UTF8.GetBytes(import.To);
        (_usePublished, _transform) = Plan(import.To, import.From, import.To, reverseCheck: true);
        IsJetStreamApi = exporter.IsSystem && import.To == JetStreamApiImport.Subject;
        ToSystemAccount = exporter.IsSystem;
    }

    /// <summary>The system account's <c>$JS.API.&gt;</c> (Go's si.to == jsAllAPI from the system account).</summary>
    public bool IsJetStreamApi { get; }

    /// <summary>Go's isSysImport: the request info gets this server's name and cluster.</summary>
    public bool ToSystemAccount { get; }

    public Account Importer { get; }

    public Account Exporter { get; }

    public ResolvedServiceImport Import { get; }

    public ServiceResponseType ResponseType { get; }

    public TimeSpan ResponseThreshold { get; }

    public bool Share => Import.Share;

    public ReadOnlySpan<byte> Map(ReadOnlySpan<byte> subject, ref byte[]? scratch) => MapSubject(subject, _usePublished, _to, _transform, ref scratch);
}

/// <summary>Lives in an exporter's index on its <c>_R_.xxxxxx.&gt;</c> prefix: routes responses back to requesters.</summary>
internal sealed class ResponseRoute(ServiceResponses responses) : InternalRoute
{
    public ServiceResponses Responses { get; } = responses;
}
