namespace Nats.Server.Accounts;

/// <summary>How many responses a service export may send per request (Go's ServiceRespType).</summary>
public enum ServiceResponseType
{
    Singleton,
    Streamed,
    Chunked,
}

/// <summary>The latency directive of a service export: parsed and reported, not sampled (no system events yet).</summary>
public sealed record ServiceLatencyDefinition(string Subject, int Sampling);

/// <summary>One entry of an account's <c>exports</c> list, as written.</summary>
public sealed class ExportDefinition
{
    public ExportDefinition(string subject, bool isService)
    {
        Subject = subject;
        IsService = isService;
    }

    public string Subject { get; }

    public bool IsService { get; }

    /// <summary>The <c>accounts</c> approval list; null means public.</summary>
    public List<string>? Accounts { get; set; }

    public ServiceResponseType ResponseType { get; set; }

    /// <summary>response_threshold; null keeps Go's default of two minutes.</summary>
    public TimeSpan? ResponseThreshold { get; set; }

    public ServiceLatencyDefinition? Latency { get; set; }

    /// <summary>account_token_position (1-based): the subject token that must equal the importer's name; 0 for none.</summary>
    public int AccountTokenPosition { get; set; }

    /// <summary>Operator mode's token_req: importers need an activation token the exporter signed.</summary>
    internal bool TokenRequired { get; set; }

    /// <summary>Operator mode: revoked activations, by importing account, with the time before which their tokens are refused.</summary>
    internal IReadOnlyDictionary<string, long>? Revocations { get; set; }
}

/// <summary>One stream import: <c>{stream: {account, subject}, prefix | to}</c>.</summary>
public sealed record StreamImportDefinition(string Account, string Subject, string? To, string? Prefix)
{
    /// <summary>Operator mode: the activation token the import carries (null for none).</summary>
    internal string? Token { get; init; }
}

/// <summary>One service import: <c>{service: {account, subject}, to, share}</c>; <see cref="To"/> is the local subject.</summary>
public sealed record ServiceImportDefinition(string Account, string Subject, string To, bool Share)
{
    /// <summary>Operator mode: the activation token the import carries (null for none).</summary>
    internal string? Token { get; init; }
}

/// <summary>Who may import an export: everyone (<see cref="Approved"/> null, no token, no position), the listed accounts, the account named by a subject token, or holders of an activation token.</summary>
internal readonly record struct ExportGrant(string Subject, IReadOnlyList<string>? Approved, int AccountTokenPosition, bool TokenRequired, IReadOnlyDictionary<string, long>? Revocations);

/// <summary>A stream export after resolution: who may import it.</summary>
internal sealed record ResolvedStreamExport(string Subject, IReadOnlyList<string>? Approved, int AccountTokenPosition)
{
    public bool TokenRequired { get; init; }

    public IReadOnlyDictionary<string, long>? Revocations { get; init; }

    public ExportGrant Grant => new(Subject, Approved, AccountTokenPosition, TokenRequired, Revocations);
}

/// <summary>A service export after resolution.</summary>
internal sealed record ResolvedServiceExport(
    string Subject,
    IReadOnlyList<string>? Approved,
    int AccountTokenPosition,
    ServiceResponseType ResponseType,
    TimeSpan ResponseThreshold,
    ServiceLatencyDefinition? Latency)
{
    public static readonly TimeSpan DefaultResponseThreshold = TimeSpan.FromMinutes(2);

    public bool TokenRequired { get; init; }

    public IReadOnlyDictionary<string, long>? Revocations { get; init; }

    public ExportGrant Grant => new(Subject, Approved, AccountTokenPosition, TokenRequired, Revocations);
}

/// <summary>
/// A stream import after resolution: messages on <see cref="From"/> in <see cref="Exporter"/> appear in
/// the importing account as <see cref="To"/> (Go keeps the same two names).
/// </summary>
internal sealed record ResolvedStreamImport(string Exporter, string From, string To)
{
    /// <summary>Operator mode: the activation token, checked again when the exporter changes.</summary>
    public string? Token { get; init; }
}

/// <summary>
/// A service import after resolution: requests published on <see cref="From"/> (local) in the importing
/// account go to <see cref="To"/> in <see cref="Exporter"/>.
/// </summary>
internal sealed record ResolvedServiceImport(string Exporter, string From, string To, bool Share)
{
    /// <summary>Operator mode: the activation token, checked again when the exporter changes.</summary>
    public string? Token { get; init; }
}
