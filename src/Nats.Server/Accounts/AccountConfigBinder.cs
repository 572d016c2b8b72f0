using Nats.Server.Auth;
using Nats.Server.Configuration;

namespace Nats.Server.Accounts;

/// <summary>
/// Binds the <c>accounts</c> block the way Go's parseAccounts does: either a list of names or a map of
/// name to account. Users declared in an account join the server's users list bound to that account
/// (names and nkeys unique across the authorization block and every account). Run after the rest of
/// the file so the authorization block is always known, whatever order the file has.
/// </summary>
internal static class AccountConfigBinder
{
    public static void Bind(ConfigValue block, ServerOptions options, List<string> errors)
    {
        switch (block.Value)
        {
            case List<ConfigValue> names:
                BindNames(names, options, errors);
                break;
            case Dictionary<string, ConfigValue> map:
                BindMap(map, options, errors);
                // Go resolves exports and imports only when everything before was clean.
                if (errors.Count == 0)
                {
                    ImportExportBinder.Resolve(options, block.Source, errors);
                }
                break;
            default:
                errors.Add($"{block.Source}: Expected map entries for accounts");
                break;
        }
    }

    private static void BindNames(List<ConfigValue> names, ServerOptions options, List<string> errors)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var item in names)
        {
            if (item.Value is not string name)
            {
                errors.Add(item.MismatchText("string"));
                continue;
            }
            if (IsReserved(name))
            {
                errors.Add($"{item.Source}: \"{name}\" is a Reserved Account");
                continue;
            }
            if (!seen.Add(name))
            {
                errors.Add($"{item.Source}: Duplicate Account Entry: {name}");
                continue;
            }
            options.Accounts.Add(new AccountOptions(name));
        }
    }

    private static void BindMap(Dictionary<string, ConfigValue> map, ServerOptions options, List<string> errors)
    {
        var taken = new HashSet<string>(StringComparer.Ordinal);
        foreach (var user in options.Users ?? [])
        {
            taken.Add(user.Username);
        }
        foreach (var nkey in options.Nkeys ?? [])
        {
            taken.Add(nkey.Nkey);
        }

        foreach (var (name, value) in map)
        {
            if (value.UsedAsVariable)
            {
                continue;
            }
            if (value.AsMap is not { } entries)
            {
                errors.Add($"{value.Source}: Expected map entries for accounts");
                continue;
            }
            if (IsReserved(name))
            {
                errors.Add($"{value.Source}: \"{name}\" is a Reserved Account");
                continue;
            }
            var account = new AccountOptions(name);
            options.Accounts.Add(account);
            List<User>? users = null;
            List<NkeyUser>? nkeys = null;
            ConfigValue? usersToken = null;
            foreach (var (key, item) in entries)
            {
                switch (key.ToLowerInvariant())
                {
                    case "nkey":
                        if (item.Value is not string nk || !NKeys.IsValidPublicAccountKey(nk))
                        {
                            errors.Add($"{item.Source}: Not a valid public nkey for an account: \"{item.Value}\"");
                            continue;
                        }
                        account.Nkey = nk;
                        break;
                    case "users":
                        usersToken = item;
                        var userErrors = new List<string>();
                        (nkeys, users) = AuthConfigBinder.ParseUsers(item.ToPlain(), userErrors);
                        errors.AddRange(userErrors.Select(e => $"{item.Source}: {e}"));
                        break;
                    case "default_permissions":
                        var permissionErrors = new List<string>();
                        account.DefaultPermissions = AuthConfigBinder.ParsePermissions(item.ToPlain(), permissionErrors);
                        errors.AddRange(permissionErrors.Select(e => $"{item.Source}: {e}"));
                        break;
                    case "limits":
                        account.Limits = BindLimits(item, errors);
                        break;
                    case "exports":
                        account.Exports = item.ToPlain();
                        ImportExportBinder.ParseExports(item, account, errors);
                        break;
                    case "imports":
                        account.Imports = item.ToPlain();
                        ImportExportBinder.ParseImports(item, account, errors);
                        break;
                    case "mappings":
                    case "maps":
                        account.Mappings = Mappings.MappingConfigBinder.Bind(item, errors);
                        break;
                    case "jetstream":
                        account.JetStream = item;
                        account.JetStreamLimits = JetStream.Configuration.JetStreamConfigBinder.BindAccount(item, errors);
                        break;
                    default:
                        ConfigBlock.Unknown(key, item, errors);
                        break;
                }
            }

            if ((users is { Count: > 0 } || nkeys is { Count: > 0 }) && usersToken is not null)
            {
                if (!string.IsNullOrEmpty(options.Username))
                {
                    errors.Add($"{usersToken.Source}: Can not have a single user/pass and accounts");
                    continue;
                }
                if (!string.IsNullOrEmpty(options.AuthToken))
                {
                    errors.Add($"{usersToken.Source}: Can not have a token and accounts");
                    continue;
                }
            }
            foreach (var nkey in nkeys ?? [])
            {
                nkey.Permissions ??= account.DefaultPermissions;
                if (!taken.Add(nkey.Nkey))
                {
                    errors.Add($"{usersToken!.Source}: Duplicate nkey \"{nkey.Nkey}\" detected");
                    continue;
                }
                nkey.Account = name;
                (options.Nkeys ??= []).Add(nkey);
            }
            foreach (var user in users ?? [])
            {
                user.Permissions ??= account.DefaultPermissions;
                if (!taken.Add(user.Username))
                {
                    errors.Add($"{usersToken!.Source}: Duplicate user \"{user.Username}\" detected");
                    continue;
                }
                user.Account = name;
                (options.Users ??= []).Add(user);
            }
        }
    }

    private static AccountLimits BindLimits(ConfigValue item, List<string> errors)
    {
        if (item.AsMap is not { } map)
        {
            errors.Add($"{item.Source}: Expected account limits to be a map/struct, got {item.Value}");
            return AccountLimits.Unlimited;
        }
        var limits = AccountLimits.Unlimited;
        foreach (var (key, v) in map)
        {
            if (v.Value is not long l && key.ToLowerInvariant() is "max_connections" or "max_conn" or "max_subscriptions" or "max_subs"
                    or "max_payload" or "max_pay" or "max_leafnodes" or "max_leafs")
            {
                errors.Add(v.MismatchText("int64"));
                continue;
            }
            var n = v.Value is long value ? (int)value : 0;
            switch (key.ToLowerInvariant())
            {
                case "max_connections":
                case "max_conn":
                    limits = limits with { MaxConnections = n };
                    break;
                case "max_subscriptions":
                case "max_subs":
                    limits = limits with { MaxSubscriptions = n };
                    break;
                case "max_payload":
                case "max_pay":
                    limits = limits with { MaxPayload = n };
                    break;
                case "max_leafnodes":
                case "max_leafs":
                    limits = limits with { MaxLeafNodes = n };
                    break;
                default:
                    if (!v.UsedAsVariable)
                    {
                        errors.Add($"{v.Source}: Unknown field \"{key}\" parsing account limits");
                    }
                    break;
            }
        }
        return limits;
    }

    /// <summary>Go's isReservedAccount: only the global account's name is taken.</summary>
    private static bool IsReserved(string name) => name == Account.GlobalAccountName;
}
