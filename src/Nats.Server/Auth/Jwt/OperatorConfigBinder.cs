using System.Text.RegularExpressions;
using Nats.Server.Configuration;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// The operator-mode keys of a configuration file (Go's processConfigFileLine cases for operator,
/// resolver, resolver_preload, resolver_pinned_accounts and trusted), with Go's texts.
/// </summary>
internal static partial class OperatorConfigBinder
{
    /// <summary>Binds <paramref name="key"/> (already lower-cased) if it is an operator-mode key; false otherwise.</summary>
    public static bool TryBind(string key, ConfigValue v, OperatorOptions options, List<string> errors)
    {
        switch (key)
        {
            case "operator":
            case "operators":
            case "roots":
            case "root":
            case "root_operators":
            case "root_operator":
                BindOperators(v, options, errors);
                return true;
            case "resolver":
            case "account_resolver":
            case "accounts_resolver":
                BindResolver(v, options, errors);
                return true;
            case "resolver_preload":
                BindPreload(v, options, errors);
                return true;
            case "resolver_pinned_accounts":
                options.PinnedAccounts = new HashSet<string>(StringList(v, "resolver_pinned_accounts", errors), StringComparer.Ordinal);
                return true;
            case "trusted":
            case "trusted_keys":
                options.TrustedKeys = StringList(v, "trusted", errors);
                foreach (var trusted in options.TrustedKeys)
                {
                    if (!NKeys.IsValidPublicOperatorKey(trusted))
                    {
                        errors.Add($"{v.Source}: trust key {GoQuote.Quote(trusted)} required to be a valid public operator nkey");
                    }
                }
                return true;
            default:
                return false;
        }
    }

    /// <summary>A file name or an inline JWT. Go's switch has no case for a config list, so a list is refused.</summary>
    private static void BindOperators(ConfigValue v, OperatorOptions options, List<string> errors)
    {
        options.TrustedOperators.Clear();
        if (v.Value is not string source)
        {
            errors.Add($"{v.Source}: error parsing operators: unsupported type {GoConfigText.TypeName(v)}");
            return;
        }
        try
        {
            options.TrustedOperators.Add(ReadOperator(source));
        }
        catch (Exception e) when (e is JwtException or IOException or UnauthorizedAccessException)
        {
            errors.Add($"{v.Source}: error parsing operator JWT: {e.Message}");
        }
        // Go takes the account server URL and system account of a single operator unless configured.
        if (options.TrustedOperators.Count == 1)
        {
            var op = options.TrustedOperators[0];
            options.OperatorSystemAccount = string.IsNullOrEmpty(op.Nats.SystemAccount) ? null : op.Nats.SystemAccount;
            if (options.Resolver is null && Uri.TryCreate(op.Nats.AccountServerUrl, UriKind.Absolute, out var url))
            {
                options.Resolver = new ResolverOptions { Kind = ResolverKind.Url, Url = url.ToString().TrimEnd('/') + "/accounts" };
            }
        }
    }

    /// <summary>Go's readOperatorJWT: a file, or the JWT itself when no such file exists and the text starts like one.</summary>
    internal static OperatorClaims ReadOperator(string source)
    {
        string contents;
        try
        {
            contents = File.ReadAllText(source);
        }
        catch (Exception e) when ((e is IOException or UnauthorizedAccessException or ArgumentException) && source.StartsWith("eyJ", StringComparison.Ordinal))
        {
            contents = source;
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            throw new IOException($"open {source}: no such file or directory");
        }
        return JwtDecoder.DecodeOperator(JwtDecoder.ParseDecorated(contents));
    }

    private static void BindResolver(ConfigValue v, OperatorOptions options, List<string> errors)
    {
        // The resolver setting replaces whatever the operator JWT implied, even when it fails to parse.
        options.Resolver = null;
        switch (v.Value)
        {
            case string text:
                if (MemoryResolver().IsMatch(text))
                {
                    options.Resolver = new ResolverOptions { Kind = ResolverKind.Memory };
                }
                else if (UrlResolver().Match(text) is { Success: true } url)
                {
                    if (!Uri.TryCreate(url.Groups[1].Value, UriKind.Absolute, out var parsed) || string.IsNullOrEmpty(parsed.Host))
                    {
                        errors.Add($"{v.Source}: error parsing account resolver url {GoQuote.Quote(url.Groups[1].Value)}: invalid URL");
                        return;
                    }
                    options.Resolver = new ResolverOptions { Kind = ResolverKind.Url, Url = url.Groups[1].Value };
                }
                break;
            case Dictionary<string, ConfigValue> map:
                if (!BindDirectoryResolver(v, map, options, errors))
                {
                    return;
                }
                break;
            default:
                errors.Add($"{v.Source}: error parsing operator resolver, wrong type {GoConfigText.TypeName(v)}");
                return;
        }
        if (options.Resolver is null)
        {
            errors.Add($"{v.Source}: error parsing account resolver, should be MEM or  URL(\"url\") or a map containing dir and type state=[FULL|CACHE])");
        }
    }

    private static bool BindDirectoryResolver(ConfigValue v, Dictionary<string, ConfigValue> map, OperatorOptions options, List<string> errors)
    {
        var dir = "";
        var type = "";
        var allowDelete = false;
        long limit = 0;
        TimeSpan ttl = default, interval = default, timeout = default;
        try
        {
            dir = Get(map, "dir")?.String() ?? "";
            type = Get(map, "type")?.String() ?? "";
            allowDelete = Get(map, "allow_delete")?.Bool() ?? false;
            limit = Get(map, "limit")?.Int64() ?? 0;
            ttl = Duration(v, Get(map, "ttl"));
            interval = Duration(v, Get(map, "interval"));
            timeout = Duration(v, Get(map, "timeout"));
        }
        catch (ConfigBindException e)
        {
            errors.Add(e.Message);
            return false;
        }
        if (dir == "")
        {
            errors.Add($"{v.Source}: dir has no value and needs to point to a directory");
            return false;
        }
        if (File.Exists(dir))
        {
            errors.Add($"{v.Source}: dir needs to point to an accessible directory");
            return false;
        }
        ResolverKind kind;
        switch (type.ToUpperInvariant())
        {
            case "CACHE":
                kind = ResolverKind.Cache;
                if (interval != TimeSpan.Zero)
                {
                    errors.Add($"{v.Source}: CACHE does not accept sync");
                }
                if (allowDelete)
                {
                    errors.Add($"{v.Source}: CACHE does not accept allow_delete");
                }
                break;
            case "FULL":
                kind = ResolverKind.Full;
                if (ttl != TimeSpan.Zero)
                {
                    errors.Add($"{v.Source}: FULL does not accept ttl");
                }
                break;
            default:
                // No resolver: reported by the caller as Go does.
                return true;
        }
        try
        {
            // Go's directory store creates the directory when the configuration is read.
            Directory.CreateDirectory(dir);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{v.Source}: {e.Message}");
            return false;
        }
        options.Resolver = new ResolverOptions
        {
            Kind = kind,
            Directory = Path.GetFullPath(dir),
            AllowDelete = allowDelete,
            Limit = limit,
            Ttl = ttl,
            Interval = interval,
            Timeout = timeout,
        };
        return true;
    }

    /// <summary>Go's time.ParseDuration on the string; a failure is reported at the resolver block.</summary>
    private static TimeSpan Duration(ConfigValue block, ConfigValue? v)
    {
        if (v is null)
        {
            return TimeSpan.Zero;
        }
        return GoDuration.TryParse(v.String(), out var d, out var error) ? d : throw new ConfigBindException(block, error);
    }

    private static ConfigValue? Get(Dictionary<string, ConfigValue> map, string key) => map.GetValueOrDefault(key);

    private static void BindPreload(ConfigValue v, OperatorOptions options, List<string> errors)
    {
        if (v.AsMap is not { } map)
        {
            errors.Add($"{v.Source}: preload should be a map of account_public_key:account_jwt");
            return;
        }
        options.Preload.Clear();
        foreach (var (key, item) in map)
        {
            if (item.Value is not string token)
            {
                errors.Add($"{item.Source}: preload map value should be a string JWT");
                continue;
            }
            try
            {
                JwtDecoder.DecodeAccount(token);
                options.Preload[key] = token;
            }
            catch (JwtException)
            {
                errors.Add($"{item.Source}: invalid account JWT");
            }
        }
    }

    /// <summary>Go's string, []string or []interface{} of strings, with its "error parsing {what}" texts.</summary>
    private static List<string> StringList(ConfigValue v, string what, List<string> errors)
    {
        switch (v.Value)
        {
            case string s:
                return [s];
            case List<ConfigValue> list:
                var result = new List<string>();
                foreach (var item in list)
                {
                    if (item.Value is string s)
                    {
                        result.Add(s);
                    }
                    else
                    {
                        errors.Add($"{item.Source}: error parsing {what}: unsupported type in array {GoConfigText.TypeName(item)}");
                    }
                }
                return result;
            default:
                errors.Add($"{v.Source}: error parsing {what}: unsupported type {GoConfigText.TypeName(v)}");
                return [];
        }
    }

    [GeneratedRegex(@"(?i)(MEM|MEMORY)\s*")]
    private static partial Regex MemoryResolver();

    [GeneratedRegex(@"(?i)(?:URL){1}(?:\({1}\s*""?([^\s""]*)""?\s*\){1})?\s*")]
    private static partial Regex UrlResolver();
}
