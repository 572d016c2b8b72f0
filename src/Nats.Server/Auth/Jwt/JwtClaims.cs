using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// The registered claims every NATS JWT carries (nats-io/jwt v2 ClaimsData). Times are Unix seconds;
/// zero means unset.
/// </summary>
internal abstract class JwtClaims
{
    [JsonPropertyName("aud")]
    public string? Audience { get; set; }

    [JsonPropertyName("exp")]
    public long Expires { get; set; }

    [JsonPropertyName("jti")]
    public string? Id { get; set; }

    [JsonPropertyName("iat")]
    public long IssuedAt { get; set; }

    [JsonPropertyName("iss")]
    public string Issuer { get; set; } = "";

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("nbf")]
    public long NotBefore { get; set; }

    [JsonPropertyName("sub")]
    public string Subject { get; set; } = "";

    /// <summary>v1 JWTs name their kind at the top level; v2 inside "nats".</summary>
    [JsonPropertyName("type")]
    public string? V1Type { get; set; }

    /// <summary>The compact JWT this was decoded from.</summary>
    [JsonIgnore]
    public string Token { get; set; } = "";

    /// <summary>Go's ClaimsData.Validate: the time checks every claim kind gets.</summary>
    public void ValidateTimes(JwtValidation result, long now)
    {
        if (Expires > 0 && now > Expires)
        {
            result.AddTimeCheck("claim is expired");
        }
        if (NotBefore > 0 && NotBefore > now)
        {
            result.AddTimeCheck("claim is not yet valid");
        }
    }
}

/// <summary>Fields every v2 "nats" section shares (GenericFields).</summary>
internal abstract class NatsSection
{
    [JsonPropertyName("tags")]
    public List<string>? Tags { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}
