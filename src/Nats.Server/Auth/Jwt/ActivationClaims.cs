using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// An activation token (jwt.ActivationClaims): the exporting account (or its signing key) lets the
/// subject account import one private export.
/// </summary>
internal sealed class ActivationClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public ActivationSection Nats { get; set; } = new();

    /// <summary>The exporting account: issuer_account when a signing key issued the token.</summary>
    [JsonIgnore]
    public string ExporterKey => string.IsNullOrEmpty(Nats.IssuerAccount) ? Issuer : Nats.IssuerAccount;
}

internal sealed class ActivationSection : NatsSection
{
    [JsonPropertyName("subject")]
    public string? ImportSubject { get; set; }

    [JsonPropertyName("kind")]
    public string? ImportType { get; set; }

    [JsonPropertyName("issuer_account")]
    public string? IssuerAccount { get; set; }
}
