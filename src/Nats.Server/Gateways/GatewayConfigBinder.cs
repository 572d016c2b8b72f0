using Nats.Server.Configuration;

namespace Nats.Server.Gateways;

/// <summary>Go's parseGateway and parseGateways (2.9.10): keys, aliases and error texts of the <c>gateway {}</c> block.</summary>
internal static class GatewayConfigBinder
{
    public static GatewayOptions Bind(ConfigValue block, List<string> errors)
    {
        var gateway = new GatewayOptions();
        var map = block.AsMap;
        if (map is null)
        {
            errors.Add($"{block.Source}: Expected gateway to be a map, got {block.GoTypeName}");
            return gateway;
        }
        ConfigBlock.ForEach(map, errors, (key, v) => BindKey(gateway, key, v, errors));
        return gateway;
    }

    private static bool BindKey(GatewayOptions gateway, string key, ConfigValue v, List<string> errors)
    {
        switch (key)
        {
            case "name":
                gateway.Name = v.String();
                break;
            case "listen":
                var (host, port) = v.HostPort();
                gateway.Host = host ?? "";
                gateway.Port = port;
                break;
            case "port":
                gateway.Port = (int)v.Int64();
                break;
            case "host":
            case "net":
                gateway.Host = v.String();
                break;
            case "authorization":
                var auth = PeerAuthorizationBinder.BindSingleUser("Gateway", v, errors);
                (gateway.Username, gateway.Password, gateway.AuthTimeout) = (auth.User, auth.Password, auth.Timeout);
                break;
            case "tls":
                gateway.TlsContext = Tls.TlsConfigBinder.BindContext(v, errors);
                break;
            case "advertise":
                gateway.Advertise = v.String();
                break;
            case "connect_retries":
                gateway.ConnectRetries = (int)v.Int64();
                break;
            case "gateways":
                gateway.Gateways = BindGateways(v, errors);
                break;
            case "reject_unknown":
            case "reject_unknown_cluster":
                gateway.RejectUnknown = v.Bool();
                break;
            default:
                return false;
        }
        return true;
    }

    private static List<GatewayRemote> BindGateways(ConfigValue v, List<string> errors)
    {
        var result = new List<GatewayRemote>();
        if (v.Value is not List<ConfigValue> list)
        {
            errors.Add($"{v.Source}: Expected gateways field to be an array, got {v.GoTypeName}");
            return result;
        }
        foreach (var item in list)
        {
            if (item.AsMap is not { } map)
            {
                errors.Add($"{item.Source}: Expected gateway entry to be a map/struct, got {item.Value}");
                continue;
            }
            var remote = new GatewayRemote();
            ConfigBlock.ForEach(map, errors, (key, entry) =>
            {
                switch (key)
                {
                    case "name":
                        remote.Name = entry.String();
                        break;
                    case "url":
                        AddUrl(remote, entry, errors);
                        break;
                    case "urls":
                        remote.Urls.Clear();
                        foreach (var url in entry.List())
                        {
                            AddUrl(remote, url, errors);
                        }
                        break;
                    case "tls":
                        remote.TlsContext = Tls.TlsConfigBinder.BindContext(entry, errors);
                        break;
                    default:
                        return false;
                }
                return true;
            });
            result.Add(remote);
        }
        return result;
    }

    private static void AddUrl(GatewayRemote remote, ConfigValue v, List<string> errors)
    {
        var text = v.String().Trim();
        if (!text.Contains("://", StringComparison.Ordinal))
        {
            text = "nats://" + text;
        }
        if (Uri.TryCreate(text, UriKind.Absolute, out var url) && url.Host.Length > 0)
        {
            remote.Urls.Add(url);
        }
        else
        {
            errors.Add($"{v.Source}: error parsing gateway url \"{v.String()}\"");
        }
    }
}
