using Nats.Server.Configuration;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// The <c>authorization { auth_callout { issuer, account, auth_users, xkey } }</c> block (nats-server 2.10's
/// AuthCallout options): who signs the responses, the account the requests go to, the users that skip the
/// callout (the service's own), and the service's curve key when requests are encrypted.
/// </summary>
internal sealed class AuthCalloutOptions
{
    public string Issuer { get; private set; } = "";

    public string Account { get; private set; } = Accounts.Account.GlobalAccountName;

    public List<string> AuthUsers { get; } = [];

    public string? XKey { get; private set; }

    /// <summary>Go's parseAuthCallout, with its texts; null when the block has errors.</summary>
    public static AuthCalloutOptions? Bind(ConfigValue value, List<string> errors)
    {
        var options = new AuthCalloutOptions();
        var before = errors.Count;
        ConfigBlock.ForEach(value.Map(), errors, (key, item) =>
        {
            switch (key)
            {
                case "issuer":
                    options.Issuer = item.String();
                    if (!NKeys.IsValidPublicAccountKey(options.Issuer))
                    {
                        errors.Add($"{item.Source}: Expected callout user to be a valid public account nkey, got {GoConfigText.Quote(options.Issuer)}");
                    }
                    return true;
                case "account" or "acc":
                    options.Account = item.String();
                    return true;
                case "auth_users" or "users":
                    if (item.AsList is not { } users)
                    {
                        errors.Add($"{item.Source}: Expected auth_users field to be an array, got {item.GoTypeName}");
                        return true;
                    }
                    options.AuthUsers.AddRange(users.Select(u => u.String()));
                    return true;
                case "xkey" or "key":
                    options.XKey = item.String();
                    if (NKeys.PrefixOf(options.XKey) != NATS.NKeys.PrefixByte.Curve)
                    {
                        errors.Add($"{item.Source}: Expected callout xkey to be a valid public xkey, got {GoConfigText.Quote(options.XKey)}");
                    }
                    return true;
                default:
                    return false;
            }
        });
        if (string.IsNullOrEmpty(options.Account))
        {
            options.Account = Accounts.Account.GlobalAccountName;
        }
        if (options.Issuer.Length == 0)
        {
            errors.Add($"{value.Source}: Authorization callouts require an issuer to be specified");
        }
        else if (options.AuthUsers.Count == 0)
        {
            errors.Add($"{value.Source}: Authorization callouts require authorized users to be specified");
        }
        return errors.Count == before ? options : null;
    }
}
