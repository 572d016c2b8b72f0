using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>An operator JWT (jwt.OperatorClaims): self-signed by the operator's key.</summary>
internal sealed class OperatorClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public OperatorSection Nats { get; set; } = new();
}

internal sealed class OperatorSection : NatsSection
{
    [JsonPropertyName("signing_keys")]
    public List<string>? SigningKeys { get; set; }

    [JsonPropertyName("account_server_url")]
    public string? AccountServerUrl { get; set; }

    [JsonPropertyName("operator_service_urls")]
    public List<string>? OperatorServiceUrls { get; set; }

    [JsonPropertyName("system_account")]
    public string? SystemAccount { get; set; }

    [JsonPropertyName("assert_server_version")]
    public string? AssertServerVersion { get; set; }

    [JsonPropertyName("strict_signing_key_usage")]
    public bool StrictSigningKeyUsage { get; set; }
}
