using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>An account JWT (jwt.AccountClaims): subject is the account's public nkey, issuer the operator or one of its signing keys.</summary>
internal sealed class AccountClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public AccountSection Nats { get; set; } = new();

    /// <summary>Go's AccountClaims.Validate (the parts the server relies on).</summary>
    public void Validate(JwtValidation result, long now)
    {
        ValidateTimes(result, now);
        var limits = Nats.Limits;
        var imports = Nats.Imports?.Count ?? 0;
        var exports = Nats.Exports?.Count ?? 0;
        if (limits.Imports != JwtLimits.NoLimit && imports > limits.Imports)
        {
            result.AddError("the account contains more imports than allowed by the operator");
        }
        if (limits.Exports != JwtLimits.NoLimit)
        {
            if (exports > limits.Exports)
            {
                result.AddError("the account contains more exports than allowed by the operator");
            }
            if (!limits.WildcardExports && (Nats.Exports ?? []).Any(e => e.Subject.Contains('*') || e.Subject.Contains('>')))
            {
                result.AddError("the account contains wildcard exports that are not allowed by the operator");
            }
        }
        if (limits.TieredLimits is { Count: > 0 } tiers)
        {
            if (limits.HasGlobalJetStreamLimits)
            {
                result.AddError("JetStream Limits and tiered JetStream Limits are mutually exclusive");
            }
            if (tiers.ContainsKey(""))
            {
                result.AddError("Tiered JetStream Limits can not contain a blank \"\" tier name");
            }
        }
        foreach (var import in Nats.Imports ?? [])
        {
            ActivationValidation.ValidateImport(import, Subject, result);
        }
        Nats.Authorization?.Validate(result);
        foreach (var (key, scope) in Nats.SigningKeys)
        {
            if (!NKeys.IsValidPublicAccountKey(key))
            {
                result.AddError(scope is null ? $"{GoQuote.Quote(key)} is not a valid account signing key" : $"{key} is not an account public key");
            }
        }
    }
}

internal sealed class AccountSection : NatsSection
{
    [JsonPropertyName("imports")]
    public List<JwtImport>? Imports { get; set; }

    [JsonPropertyName("exports")]
    public List<JwtExport>? Exports { get; set; }

    [JsonPropertyName("limits")]
    public OperatorLimits Limits { get; set; } = new();

    /// <summary>Public signing keys; a key with a scope carries the user template it imposes (null: unscoped).</summary>
    [JsonPropertyName("signing_keys")]
    [JsonConverter(typeof(SigningKeysConverter))]
    public Dictionary<string, UserScope?> SigningKeys { get; set; } = new(StringComparer.Ordinal);

    /// <summary>Revoked user keys (or "*") with the time before which their JWTs are refused.</summary>
    [JsonPropertyName("revocations")]
    public Dictionary<string, long>? Revocations { get; set; }

    [JsonPropertyName("default_permissions")]
    public JwtDefaultPermissions? DefaultPermissions { get; set; }

    [JsonPropertyName("mappings")]
    public Dictionary<string, List<JwtWeightedMapping>>? Mappings { get; set; }

    [JsonPropertyName("description")]
    public string? Description { get; set; }

    /// <summary>The auth callout settings (nats-server 2.10); null or without auth users: no callout.</summary>
    [JsonPropertyName("authorization")]
    public ExternalAuthorization? Authorization { get; set; }

    [JsonPropertyName("info_url")]
    public string? InfoUrl { get; set; }
}

/// <summary>jwt.Permissions as an account's default_permissions.</summary>
internal sealed class JwtDefaultPermissions
{
    [JsonPropertyName("pub")]
    public JwtPermission? Pub { get; set; }

    [JsonPropertyName("sub")]
    public JwtPermission? Sub { get; set; }

    [JsonPropertyName("resp")]
    public JwtResponsePermission? Resp { get; set; }
}

/// <summary>
/// jwt.OperatorLimits flattened as Go marshals it. A JWT that omits a field means 0, which Go reads as
/// "none allowed" for JetStream and as no limit elsewhere only when the claim wrote -1.
/// </summary>
internal sealed class OperatorLimits
{
    [JsonPropertyName("subs")]
    public long Subs { get; set; }

    [JsonPropertyName("data")]
    public long Data { get; set; }

    [JsonPropertyName("payload")]
    public long Payload { get; set; }

    [JsonPropertyName("imports")]
    public long Imports { get; set; }

    [JsonPropertyName("exports")]
    public long Exports { get; set; }

    [JsonPropertyName("wildcards")]
    public bool WildcardExports { get; set; }

    [JsonPropertyName("disallow_bearer")]
    public bool DisallowBearer { get; set; }

    [JsonPropertyName("conn")]
    public long Conn { get; set; }

    [JsonPropertyName("leaf")]
    public long LeafNodeConn { get; set; }

    [JsonPropertyName("mem_storage")]
    public long MemoryStorage { get; set; }

    [JsonPropertyName("disk_storage")]
    public long DiskStorage { get; set; }

    [JsonPropertyName("streams")]
    public long Streams { get; set; }

    [JsonPropertyName("consumer")]
    public long Consumer { get; set; }

    [JsonPropertyName("max_ack_pending")]
    public long MaxAckPending { get; set; }

    [JsonPropertyName("mem_max_stream_bytes")]
    public long MemoryMaxStreamBytes { get; set; }

    [JsonPropertyName("disk_max_stream_bytes")]
    public long DiskMaxStreamBytes { get; set; }

    [JsonPropertyName("max_bytes_required")]
    public bool MaxBytesRequired { get; set; }

    [JsonPropertyName("tiered_limits")]
    public Dictionary<string, JwtJetStreamLimits>? TieredLimits { get; set; }

    [JsonIgnore]
    public bool HasGlobalJetStreamLimits =>
        MemoryStorage != 0 || DiskStorage != 0 || Streams != 0 || Consumer != 0 || MaxAckPending != 0
        || MemoryMaxStreamBytes != 0 || DiskMaxStreamBytes != 0 || MaxBytesRequired;

    /// <summary>Go's IsJSEnabled.</summary>
    [JsonIgnore]
    public bool JetStreamEnabled => TieredLimits is { Count: > 0 } tiers
        ? tiers.Values.Any(t => t.MemoryStorage != 0 || t.DiskStorage != 0)
        : MemoryStorage != 0 || DiskStorage != 0;
}

/// <summary>One JetStream tier of jwt.JetStreamTieredLimits.</summary>
internal sealed class JwtJetStreamLimits
{
    [JsonPropertyName("mem_storage")]
    public long MemoryStorage { get; set; }

    [JsonPropertyName("disk_storage")]
    public long DiskStorage { get; set; }

    [JsonPropertyName("streams")]
    public long Streams { get; set; }

    [JsonPropertyName("consumer")]
    public long Consumer { get; set; }

    [JsonPropertyName("max_ack_pending")]
    public long MaxAckPending { get; set; }

    [JsonPropertyName("mem_max_stream_bytes")]
    public long MemoryMaxStreamBytes { get; set; }

    [JsonPropertyName("disk_max_stream_bytes")]
    public long DiskMaxStreamBytes { get; set; }

    [JsonPropertyName("max_bytes_required")]
    public bool MaxBytesRequired { get; set; }
}

/// <summary>One destination of an account mapping (jwt.WeightedMapping); weight 0 means 100.</summary>
internal sealed class JwtWeightedMapping
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("weight")]
    public int Weight { get; set; }

    [JsonPropertyName("cluster")]
    public string? Cluster { get; set; }
}
