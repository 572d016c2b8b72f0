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
}

/// <summary>One stream import: <c>{stream: {account, subject}, prefix | to}</c>.</summary>
public sealed record StreamImportDefinition(string Account, string Subject, string? To, string? Prefix);

/// <summary>One service import: <c>{service: {account, subject}, to, share}</c>; <see cref="To"/> is the local subject.</summary>
public sealed record ServiceImportDefinition(string Account, string Subject, string To, bool Share);

/// <summary>A stream export after resolution: who may import it.</summary>
internal sealed record ResolvedStreamExport(string Subject, IReadOnlyList<string>? Approved, int AccountTokenPosition);

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
}

/// <summary>
/// A stream import after resolution: messages on <see cref="From"/> in <see cref="Exporter"/> appear in
/// the importing account as <see cref="To"/> (Go keeps the same two names).
/// </summary>
internal sealed record ResolvedStreamImport(string Exporter, string From, string To);

/// <summary>
/// A service import after resolution: requests published on <see cref="From"/> (local) in the importing
/// account go to <see cref="To"/> in <see cref="Exporter"/>.
/// </summary>
internal sealed record ResolvedServiceImport(string Exporter, string From, string To, bool Share);
