using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// An account JWT's <c>authorization</c> block (jwt v2 ExternalAuthorization, nats-server 2.10): the
/// account's users other than <c>auth_users</c> are decided by its auth callout service, which may place
/// them in the accounts listed in <c>allowed_accounts</c> ("*": any), and requests are sealed for
/// <c>xkey</c> when set.
/// </summary>
internal sealed class ExternalAuthorization
{
    /// <summary>jwt.AnyAccount: alone in allowed_accounts, any account may be a placement.</summary>
    public const string AnyAccount = "*";

    [JsonPropertyName("auth_users")]
    public List<string>? AuthUsers { get; set; }

    [JsonPropertyName("allowed_accounts")]
    public List<string>? AllowedAccounts { get; set; }

    [JsonPropertyName("xkey")]
    public string? XKey { get; set; }

    /// <summary>Go's IsEnabled: callouts are on once an auth user is named.</summary>
    [JsonIgnore]
    public bool IsEnabled => AuthUsers is { Count: > 0 };

    public bool IsAuthUser(string user) => AuthUsers?.Contains(user, StringComparer.Ordinal) == true;

    /// <summary>Go's isAllowedAcount: "*" alone allows every account, otherwise the key must be listed.</summary>
    public bool IsAllowedAccount(string account) =>
        AllowedAccounts is { Count: > 0 } allowed
        && ((allowed.Count == 1 && allowed[0] == AnyAccount) || allowed.Contains(account, StringComparer.Ordinal));

    /// <summary>jwt's ExternalAuthorization.Validate, with its texts.</summary>
    public void Validate(JwtValidation result)
    {
        var allowed = AllowedAccounts ?? [];
        if (allowed.Count > 0 && !IsEnabled)
        {
            result.AddError("External authorization cannot have accounts without users specified");
        }
        foreach (var user in AuthUsers ?? [])
        {
            if (!NKeys.IsValidPublicUserKey(user))
            {
                result.AddError($"AuthUser {GoQuote.Quote(user)} is not a valid user public key");
            }
        }
        foreach (var account in allowed)
        {
            if (account == AnyAccount)
            {
                if (allowed.Count > 1)
                {
                    result.AddError($"AllowedAccounts can only be a list of accounts or {GoQuote.Quote(AnyAccount)}");
                }
                continue;
            }
            if (!NKeys.IsValidPublicAccountKey(account))
            {
                result.AddError($"Account {GoQuote.Quote(account)} is not a valid account public key");
            }
        }
        if (!string.IsNullOrEmpty(XKey) && NKeys.PrefixOf(XKey) != NATS.NKeys.PrefixByte.Curve)
        {
            result.AddError($"XKey {GoQuote.Quote(XKey)} is not a valid public xkey");
        }
    }
}
