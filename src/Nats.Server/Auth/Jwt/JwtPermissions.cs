using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>Allow and deny subject lists (jwt.Permission).</summary>
internal sealed class JwtPermission
{
    [JsonPropertyName("allow")]
    public List<string>? Allow { get; set; }

    [JsonPropertyName("deny")]
    public List<string>? Deny { get; set; }

    [JsonIgnore]
    public bool IsEmpty => (Allow is null || Allow.Count == 0) && (Deny is null || Deny.Count == 0);
}

/// <summary>allow_responses in a JWT: max responses and their time to live in nanoseconds (jwt.ResponsePermission).</summary>
internal sealed class JwtResponsePermission
{
    [JsonPropertyName("max")]
    public int MaxMsgs { get; set; }

    [JsonPropertyName("ttl")]
    public long ExpiresNanos { get; set; }
}

/// <summary>A connect-time window, "15:04:05" clock times (jwt.TimeRange).</summary>
internal sealed class JwtTimeRange
{
    [JsonPropertyName("start")]
    public string? Start { get; set; }

    [JsonPropertyName("end")]
    public string? End { get; set; }
}

/// <summary>
/// The user part of Go's UserPermissionLimits (Permissions + Limits + bearer + connection types),
/// flattened as Go's embedded structs marshal; shared by user JWTs and scoped signing key templates.
/// </summary>
internal class JwtUserPermissionLimits : NatsSection
{
    [JsonPropertyName("pub")]
    public JwtPermission? Pub { get; set; }

    [JsonPropertyName("sub")]
    public JwtPermission? Sub { get; set; }

    [JsonPropertyName("resp")]
    public JwtResponsePermission? Resp { get; set; }

    [JsonPropertyName("src")]
    [JsonConverter(typeof(CidrListConverter))]
    public List<string>? Src { get; set; }

    [JsonPropertyName("times")]
    public List<JwtTimeRange>? Times { get; set; }

    [JsonPropertyName("times_location")]
    public string? Locale { get; set; }

    [JsonPropertyName("subs")]
    public long Subs { get; set; }

    [JsonPropertyName("data")]
    public long Data { get; set; }

    [JsonPropertyName("payload")]
    public long Payload { get; set; }

    [JsonPropertyName("bearer_token")]
    public bool BearerToken { get; set; }

    [JsonPropertyName("allowed_connection_types")]
    public List<string>? AllowedConnectionTypes { get; set; }

    /// <summary>
    /// Go's HasEmptyPermissions, a reflect.DeepEqual with the zero value: scoped signing keys require
    /// it. As in Go, an empty list is not the same as an absent one.
    /// </summary>
    [JsonIgnore]
    public bool HasEmptyPermissions =>
        Pub is not { Allow: not null } && Pub is not { Deny: not null } && Sub is not { Allow: not null } && Sub is not { Deny: not null }
        && Resp is null && Src is null && Times is null && string.IsNullOrEmpty(Locale)
        && Subs == 0 && Data == 0 && Payload == 0 && !BearerToken && AllowedConnectionTypes is null;
}

internal static class JwtLimits
{
    public const long NoLimit = -1;
}
