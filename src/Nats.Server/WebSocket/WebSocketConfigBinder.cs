using Nats.Server.Configuration;

namespace Nats.Server.WebSocket;

/// <summary>Go's parseWebsocket: keys, aliases and error texts of the <c>websocket {}</c> block.</summary>
internal static class WebSocketConfigBinder
{
    public static WebSocketOptions Bind(ConfigValue block, List<string> errors)
    {
        var ws = new WebSocketOptions();
        var map = block.AsMap;
        if (map is null)
        {
            errors.Add($"{block.Source}: Expected websocket to be a map, got {block.GoTypeName}");
            return ws;
        }
        ConfigBlock.ForEach(map, errors, (key, v) =>
        {
            switch (key)
            {
                case "listen":
                    var (host, port) = v.HostPort();
                    // Go's parseListen leaves the host empty for a bare port: every interface.
                    ws.Host = host ?? "";
                    ws.Port = port;
                    return true;
                case "port":
                    ws.Port = (int)v.Int64();
                    return true;
                case "host" or "net":
                    ws.Host = v.String();
                    return true;
                case "advertise":
                    ws.Advertise = v.String();
                    return true;
                case "no_tls":
                    ws.NoTls = v.Bool();
                    return true;
                case "tls":
                    if (Tls.TlsConfigBinder.Bind(v, errors) is { } tls)
                    {
                        try
                        {
                            ws.TlsContext = Tls.TlsServerContext.Create(tls);
                            ws.Tls = tls;
                        }
                        catch (InvalidOperationException e)
                        {
                            errors.Add($"{v.Source}: {e.Message}");
                        }
                    }
                    return true;
                case "same_origin":
                    ws.SameOrigin = v.Bool();
                    return true;
                case "allowed_origins" or "allowed_origin" or "allow_origins" or "allow_origin" or "origins" or "origin":
                    ws.AllowedOrigins = v.StringOrList("allowed origins");
                    return true;
                case "handshake_timeout":
                    ws.HandshakeTimeout = v.Value switch
                    {
                        long seconds => TimeSpan.FromSeconds(seconds),
                        string text => GoDuration.TryParse(text, out var d, out var error) ? d : throw new ConfigBindException(v, error),
                        _ => throw new ConfigBindException(v, $"error parsing handshake timeout: unsupported type {v.GoTypeName}"),
                    };
                    return true;
                case "compress" or "compression":
                    ws.Compression = v.Bool();
                    return true;
                case "authorization" or "authentication":
                    BindAuthorization(v, ws, errors);
                    return true;
                case "jwt_cookie":
                    ws.JwtCookie = v.String();
                    return true;
                case "no_auth_user":
                    ws.NoAuthUser = v.String();
                    return true;
                default:
                    return false;
            }
        });
        return ws;
    }

    /// <summary>Go's validateWebsocketOptions; null when valid.</summary>
    public static string? Validate(ServerOptions options)
    {
        var ws = options.WebSocket;
        if (ws is null || ws.Port == 0)
        {
            return null;
        }
        if (ws.TlsContext is null && !ws.NoTls)
        {
            return "websocket requires TLS configuration";
        }
        if (!string.IsNullOrEmpty(ws.NoAuthUser) && (options.Users is null || options.Users.All(u => u.Username != ws.NoAuthUser)))
        {
            return options.Users is null
                ? $"no_auth_user {ws.NoAuthUser!.Quote()} present, but users are not defined"
                : $"no_auth_user {ws.NoAuthUser!.Quote()} not present as user in authorization block or account configuration";
        }
        if (options.Users is { Count: > 0 } || options.Nkeys is { Count: > 0 })
        {
            if (!string.IsNullOrEmpty(ws.Username))
            {
                return "websocket authentication username not compatible with presence of users/nkeys";
            }
            if (!string.IsNullOrEmpty(ws.Token))
            {
                return "websocket authentication token not compatible with presence of users/nkeys";
            }
        }
        if (!string.IsNullOrEmpty(ws.JwtCookie))
        {
            return $"trusted operators or trusted keys configuration is required for JWT authentication via cookie \"{ws.JwtCookie}\"";
        }
        return null;
    }

    private static string Quote(this string s) => $"\"{s}\"";

    /// <summary>Go's parseSimpleAuth; like Go, values of the wrong type are ignored here.</summary>
    private static void BindAuthorization(ConfigValue v, WebSocketOptions ws, List<string> errors) =>
        ConfigBlock.ForEach(v.AsMap ?? [], errors, (key, item) =>
        {
            switch (key)
            {
                case "user" or "username":
                    ws.Username = item.Value as string;
                    return true;
                case "pass" or "password":
                    ws.Password = item.Value as string;
                    return true;
                case "token":
                    ws.Token = item.Value as string;
                    return true;
                case "timeout":
                    ws.AuthTimeoutSeconds = item.SecondsOrOne();
                    return true;
                default:
                    return false;
            }
        });
}
