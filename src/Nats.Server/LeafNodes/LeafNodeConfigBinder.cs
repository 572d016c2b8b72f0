using Nats.Server.Configuration;

namespace Nats.Server.LeafNodes;

/// <summary>Go's parseLeafNodes, parseLeafAuthorization and parseRemoteLeafNodes (2.9.10): keys, aliases and error
/// texts of the <c>leafnodes {}</c> block.</summary>
internal static class LeafNodeConfigBinder
{
    public static LeafNodeOptions Bind(ConfigValue block, List<string> errors, List<string> warnings)
    {
        var leaf = new LeafNodeOptions();
        var map = block.AsMap;
        if (map is null)
        {
            errors.Add($"{block.Source}: Expected map to define a leafnode, got {block.GoTypeName}");
            return leaf;
        }
        ConfigBlock.ForEach(map, errors, (key, v) => BindKey(leaf, key, v, errors, warnings));
        if (leaf.TlsContext is { } tls && !HasKey(map, "authorization", "timeout"))
        {
            // Go's getDefaultAuthTimeout: with TLS the CONNECT may come one second after the TLS timeout.
            leaf.AuthTimeout = tls.Timeout + TimeSpan.FromSeconds(1);
        }
        foreach (var remote in leaf.Remotes)
        {
            if (remote.Urls.Select(u => u.Scheme is "ws" or "wss").Distinct().Count() > 1)
            {
                // Go's validateLeafNode.
                errors.Add("remote leaf node configuration cannot have a mix of websocket and non-websocket urls: " +
                    $"[{string.Join(" ", remote.Urls.Select(u => $"\"{Redacted(u)}\""))}]");
            }
        }
        return leaf;
    }

    private static bool HasKey(Dictionary<string, ConfigValue> map, string block, string key) =>
        map.FirstOrDefault(e => string.Equals(e.Key, block, StringComparison.OrdinalIgnoreCase)).Value?.AsMap is { } inner &&
        inner.Keys.Any(k => string.Equals(k, key, StringComparison.OrdinalIgnoreCase));

    /// <summary>Go's redactURLList: a password in the URL shows as xxxxx.</summary>
    private static string Redacted(Uri url)
    {
        var text = url.ToString().TrimEnd('/');
        var colon = url.UserInfo.IndexOf(':');
        return colon < 0 ? text : text.Replace(url.UserInfo + "@", url.UserInfo[..colon] + ":xxxxx@", StringComparison.Ordinal);
    }

    private static bool BindKey(LeafNodeOptions leaf, string key, ConfigValue v, List<string> errors, List<string> warnings)
    {
        switch (key)
        {
            case "listen":
                var (host, port) = v.HostPort();
                leaf.Host = host ?? "";
                leaf.Port = port;
                break;
            case "port":
                leaf.Port = (int)v.Int64();
                break;
            case "host":
            case "net":
                leaf.Host = v.String();
                break;
            case "authorization":
                BindAuthorization(leaf, v, errors);
                break;
            case "remotes":
                leaf.Remotes = BindRemotes(v, errors);
                break;
            case "reconnect":
            case "reconnect_delay":
            case "reconnect_interval":
                leaf.ReconnectInterval = v.Value switch
                {
                    long seconds => TimeSpan.FromSeconds(seconds),
                    string text when GoDuration.TryParse(text, out var d, out _) => d,
                    _ => throw new ConfigBindException(v, $"invalid reconnect interval {v.Value}"),
                };
                break;
            case "tls":
                leaf.TlsContext = Tls.TlsConfigBinder.BindContext(v, errors);
                break;
            case "leafnode_advertise":
            case "advertise":
                leaf.Advertise = v.String();
                break;
            case "no_advertise":
                leaf.NoAdvertise = v.Bool();
                break;
            case "min_version":
            case "minimum_version":
                break;
            default:
                return false;
        }
        return true;
    }

    private static void BindAuthorization(LeafNodeOptions leaf, ConfigValue v, List<string> errors)
    {
        var auth = PeerAuthorizationBinder.Bind(v, errors, (key, item) =>
        {
            switch (key)
            {
                case "account":
                    leaf.Account = item.String();
                    return true;
                case "users":
                    leaf.Users = BindUsers(item, errors);
                    return true;
                default:
                    return false;
            }
        });
        (leaf.Username, leaf.Password, leaf.AuthTimeout) = (auth.User, auth.Password, auth.Timeout);
        if (leaf.Users.Count > 0)
        {
            if (!string.IsNullOrEmpty(leaf.Username))
            {
                errors.Add($"{v.Source}: can not have a single user/pass and a users array");
            }
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var user in leaf.Users)
            {
                if (!seen.Add(user.Username))
                {
                    errors.Add($"{v.Source}: duplicate user \"{user.Username}\" detected in leafnode authorization");
                }
            }
        }
    }

    private static List<LeafUser> BindUsers(ConfigValue v, List<string> errors)
    {
        if (v.AsList is not { } list)
        {
            throw new ConfigBindException(v, $"Expected users field to be an array, got {v.Value}");
        }
        var users = new List<LeafUser>();
        foreach (var entry in list)
        {
            if (entry.AsMap is not { } map)
            {
                errors.Add($"{entry.Source}: Expected user entry to be a map/struct, got {entry.Value}");
                continue;
            }
            string user = "", password = "";
            string? account = null;
            ConfigBlock.ForEach(map, errors, (key, item) =>
            {
                switch (key)
                {
                    case "user":
                    case "username":
                        user = item.String();
                        break;
                    case "pass":
                    case "password":
                        password = item.String();
                        break;
                    case "account":
                        account = item.String();
                        break;
                    default:
                        return false;
                }
                return true;
            });
            users.Add(new LeafUser(user, password, account));
        }
        return users;
    }

    private static List<LeafRemote> BindRemotes(ConfigValue v, List<string> errors)
    {
        if (v.AsList is not { } list)
        {
            throw new ConfigBindException(v, $"Expected remotes field to be an array, got {v.GoTypeName}");
        }
        var remotes = new List<LeafRemote>();
        foreach (var entry in list)
        {
            if (entry.AsMap is not { } map)
            {
                errors.Add($"{entry.Source}: Expected remote leafnode entry to be a map/struct, got {entry.Value}");
                continue;
            }
            var remote = new LeafRemote();
            ConfigBlock.ForEach(map, errors, (key, item) => BindRemoteKey(remote, key, item, errors));
            remotes.Add(remote);
        }
        return remotes;
    }

    private static bool BindRemoteKey(LeafRemote remote, string key, ConfigValue item, List<string> errors)
    {
        switch (key)
        {
            case "no_randomize":
            case "dont_randomize":
                remote.NoRandomize = item.Bool();
                break;
            case "url":
            case "urls":
                var texts = item.Value switch
                {
                    string s => [s],
                    List<ConfigValue> values => values.Select(x => x.String()).ToList(),
                    _ => throw new ConfigBindException(item, $"Expected remote leafnode url to be an array or string, got {item.Value}"),
                };
                foreach (var text in texts)
                {
                    if (Uri.TryCreate(text.Trim(), UriKind.Absolute, out var url) && url.Host.Length > 0)
                    {
                        remote.Urls.Add(url);
                    }
                    else
                    {
                        errors.Add($"{item.Source}: Error parsing remote leafnode url \"{text}\"");
                    }
                }
                break;
            case "account":
            case "local":
                remote.LocalAccount = item.String();
                break;
            case "creds":
            case "credentials":
                remote.Credentials = item.String();
                break;
            case "tls":
                remote.TlsContext = Tls.TlsConfigBinder.BindClientContext(item, errors);
                break;
            case "hub":
                remote.Hub = item.Bool();
                break;
            case "deny_imports":
            case "deny_import":
                remote.DenyImports = item.StringOrList(key);
                break;
            case "deny_exports":
            case "deny_export":
                remote.DenyExports = item.StringOrList(key);
                break;
            case "ws_compress":
            case "ws_compression":
            case "websocket_compress":
            case "websocket_compression":
                remote.WebSocketCompression = item.Bool();
                break;
            case "ws_no_masking":
            case "websocket_no_masking":
                remote.WebSocketNoMasking = item.Bool();
                break;
            case "jetstream_cluster_migrate":
            case "js_cluster_migrate":
                break;
            default:
                return false;
        }
        return true;
    }
}
