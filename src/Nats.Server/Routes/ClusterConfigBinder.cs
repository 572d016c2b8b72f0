using Nats.Server.Configuration;

namespace Nats.Server.Routes;

/// <summary>Go's parseCluster (2.9.10): keys, aliases and error texts of the <c>cluster {}</c> block,
/// plus the 2.10 keys a 2.9 peer accepts and ignores.</summary>
internal static class ClusterConfigBinder
{
    public static ClusterOptions Bind(ConfigValue block, List<string> errors, List<string> warnings)
    {
        var cluster = new ClusterOptions();
        var map = block.AsMap;
        if (map is null)
        {
            errors.Add($"{block.Source}: Expected map to define cluster, got {block.GoTypeName}");
            return cluster;
        }
        ConfigBlock.ForEach(map, errors, (key, v) => BindKey(cluster, key, v, errors, warnings));
        cluster.Enabled = cluster.Port != 0;
        return cluster;
    }

    private static bool BindKey(ClusterOptions cluster, string key, ConfigValue v, List<string> errors, List<string> warnings)
    {
        switch (key)
        {
            case "name":
                cluster.Name = v.String();
                break;
            case "listen":
                BindListen(cluster, v);
                break;
            case "port":
                cluster.Port = (int)v.Int64();
                break;
            case "host":
            case "net":
                cluster.Host = v.String();
                break;
            case "authorization":
                var auth = PeerAuthorizationBinder.BindSingleUser("Cluster", v, errors);
                (cluster.Username, cluster.Password, cluster.AuthTimeout) = (auth.User, auth.Password, auth.Timeout);
                if (auth.Permissions is { } defaults)
                {
                    warnings.Add($"{v.Source}: invalid use of field \"{key}\": setting \"permissions\" within cluster authorization block is deprecated");
                    // A top-level permissions block wins, whichever comes first (Go's setClusterPermissions overrides).
                    cluster.Permissions ??= ToRoutePermissions(defaults);
                }
                break;
            case "routes":
                BindRoutes(cluster, v, errors, warnings);
                break;
            case "tls":
                cluster.TlsContext = Tls.TlsConfigBinder.BindContext(v, errors);
                break;
            case "cluster_advertise":
            case "advertise":
                cluster.Advertise = v.String();
                break;
            case "no_advertise":
                cluster.NoAdvertise = v.Bool();
                break;
            case "connect_retries":
                cluster.ConnectRetries = (int)v.Int64();
                break;
            case "pool_size":
                cluster.PoolSize = (int)v.Int64();
                break;
            case "accounts":
            case "compression":
                // 2.10 pooling/pinning: accepted; a 2.9 peer uses one route for everything.
                break;
            case "permissions":
                if (BindPermissions(v, errors) is { } permissions)
                {
                    cluster.Permissions = permissions;
                }
                break;
            default:
                return false;
        }
        return true;
    }

    /// <summary>Go's parseUserPermissions with import/export as publish/subscribe; dynamic responses refused.</summary>
    private static RoutePermissions? BindPermissions(ConfigValue v, List<string> errors)
    {
        var parseErrors = new List<string>();
        var permissions = Auth.AuthConfigBinder.ParsePermissions(v.ToPlain(), parseErrors);
        errors.AddRange(parseErrors.Select(e => $"{v.Source}: {e}"));
        if (permissions is null || parseErrors.Count > 0)
        {
            return null;
        }
        if (permissions.Response is not null)
        {
            errors.Add($"{v.Source}: Cluster permissions do not support dynamic responses");
            return null;
        }
        return ToRoutePermissions(permissions);
    }

    private static RoutePermissions ToRoutePermissions(Auth.Permissions p) => new(p.Publish, p.Subscribe);

    private static void BindListen(ClusterOptions cluster, ConfigValue v)
    {
        switch (v.Value)
        {
            case long port:
                cluster.Port = (int)port;
                break;
            case string s:
                if (!ConfigRead.TrySplitHostPort(s, out var host, out var portText))
                {
                    throw new ConfigBindException(v, $"could not parse address string \"{s}\"");
                }
                if (!int.TryParse(portText, out var p))
                {
                    throw new ConfigBindException(v, $"could not parse port \"{portText}\"");
                }
                cluster.Host = host;
                cluster.Port = p;
                break;
            default:
                throw new ConfigBindException(v, $"expected port or host:port, got {v.GoTypeName}");
        }
    }

    private static void BindRoutes(ClusterOptions cluster, ConfigValue v, List<string> errors, List<string> warnings)
    {
        var list = v.List();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var routes = new List<Uri>();
        foreach (var item in list)
        {
            var text = item.String();
            if (!seen.Add(text))
            {
                warnings.Add($"{item.Source}: Duplicate route entry detected");
                continue;
            }
            if (TryParseRouteUrl(text, out var uri))
            {
                routes.Add(uri);
            }
            else
            {
                errors.Add($"{item.Source}: error parsing route url [\"{text.Trim()}\"]");
            }
        }
        cluster.Routes = routes;
    }

    /// <summary>A route URL as Go's url.Parse takes it: scheme://[user:pass@]host:port.</summary>
    internal static bool TryParseRouteUrl(string text, out Uri uri) =>
        Uri.TryCreate(text.Trim(), UriKind.Absolute, out uri!) && uri.Host.Length > 0;

    /// <summary>Go's overrideCluster: the --cluster URL gives host, port (":-1" for a free one) and the cluster credentials.</summary>
    internal static void ApplyListenUrl(ClusterOptions cluster, string listen)
    {
        if (listen.Length == 0)
        {
            cluster.Port = 0;
            cluster.Enabled = false;
            return;
        }
        var random = listen.EndsWith(":-1", StringComparison.Ordinal);
        var text = random ? listen[..^3] + ":0" : listen;
        if (!Uri.TryCreate(text, UriKind.Absolute, out var uri) || uri.Host.Length == 0)
        {
            throw new ConfigurationException($"parse \"{listen}\": invalid cluster url");
        }
        cluster.Host = uri.Host.Trim('[', ']');
        cluster.Port = random ? -1 : uri.Port;
        cluster.Enabled = true;
        if (uri.UserInfo.Length > 0)
        {
            var colon = uri.UserInfo.IndexOf(':');
            if (colon < 0)
            {
                throw new ConfigurationException("expected cluster password to be set");
            }
            cluster.Username = Uri.UnescapeDataString(uri.UserInfo[..colon]);
            cluster.Password = Uri.UnescapeDataString(uri.UserInfo[(colon + 1)..]);
        }
        else
        {
            cluster.Username = null;
            cluster.Password = null;
        }
    }

    /// <summary>Go's RoutesFromStr: a comma-separated list of URLs.</summary>
    internal static List<Uri> ParseRoutesFlag(string routes)
    {
        var result = new List<Uri>();
        foreach (var part in routes.Split(','))
        {
            if (TryParseRouteUrl(part, out var uri))
            {
                result.Add(uri);
            }
        }
        return result;
    }
}
