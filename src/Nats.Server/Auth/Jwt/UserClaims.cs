using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>A user JWT (jwt.UserClaims): subject is the user's public nkey, issuer the account or one of its signing keys.</summary>
internal sealed class UserClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public UserSection Nats { get; set; } = new();

    /// <summary>The account the user belongs to: issuer_account when a signing key issued it, else the issuer.</summary>
    [JsonIgnore]
    public string AccountKey => string.IsNullOrEmpty(Nats.IssuerAccount) ? Issuer : Nats.IssuerAccount;

    /// <summary>Go's UserClaims.Validate (plus the common time checks).</summary>
    public void Validate(JwtValidation result, long now)
    {
        ValidateTimes(result, now);
        UserLimitsValidation.Validate(Nats, result);
        if (!string.IsNullOrEmpty(Nats.IssuerAccount) && !NKeys.IsValidPublicAccountKey(Nats.IssuerAccount))
        {
            result.AddError("account_id is not an account public key");
        }
    }
}

internal sealed class UserSection : JwtUserPermissionLimits
{
    [JsonPropertyName("issuer_account")]
    public string? IssuerAccount { get; set; }
}
