namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Operator mode's configuration (Go's TrustedOperators, TrustedKeys, AccountResolver, resolver
/// preloads and pinned accounts). Operator mode is on when any operator or trusted key is configured.
/// </summary>
internal sealed class OperatorOptions
{
    /// <summary>The decoded <c>operator</c> JWTs.</summary>
    public List<OperatorClaims> TrustedOperators { get; } = [];

    /// <summary><c>trusted_keys</c>, later extended with every operator's key and signing keys (Go's validateTrustedOperators).</summary>
    public List<string>? TrustedKeys { get; set; }

    /// <summary>Operator keys whose accounts must be signed by a signing key, never the operator key itself.</summary>
    public HashSet<string> StrictSigningKeyOperators { get; } = new(StringComparer.Ordinal);

    public ResolverOptions? Resolver { get; set; }

    /// <summary><c>resolver_preload</c>: account public key to account JWT.</summary>
    public Dictionary<string, string> Preload { get; } = new(StringComparer.Ordinal);

    /// <summary><c>resolver_pinned_accounts</c>: only these accounts may have users connect.</summary>
    public HashSet<string>? PinnedAccounts { get; set; }

    /// <summary>The system account named by the single operator JWT, used when the file names none.</summary>
    public string? OperatorSystemAccount { get; set; }

    public bool Enabled => TrustedKeys is not null || TrustedOperators.Count > 0;
}

internal enum ResolverKind
{
    Memory,
    Url,
    Full,
    Cache,
}

/// <summary>The <c>resolver</c> setting: MEMORY, URL(...) or a <c>{ type, dir, ... }</c> block.</summary>
internal sealed class ResolverOptions
{
    public ResolverKind Kind { get; init; }

    public string? Url { get; init; }

    public string Directory { get; init; } = "";

    public bool AllowDelete { get; init; }

    /// <summary>Go's default sync interval for the full resolver is two minutes.</summary>
    public TimeSpan Interval { get; init; }

    /// <summary>How many JWTs the directory holds (0: Go's default for the kind).</summary>
    public long Limit { get; init; }

    public TimeSpan Timeout { get; init; }

    public TimeSpan Ttl { get; init; }

    public bool IsDirectory => Kind is ResolverKind.Full or ResolverKind.Cache;
}
