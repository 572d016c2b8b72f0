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
        foreach (var (key, v) in map)
        {
            try
            {
                switch (key.ToLowerInvariant())
                {
                    case "listen":
                        if (!ConfigBinder.TrySplitHostPort(v.Value as string ?? "", out var host, out var portText) || !int.TryParse(portText, out var port))
                        {
                            errors.Add($"{v.Source}: could not parse address string \"{v.Value}\"");
                            break;
                        }
                        ws.Host = host;
                        ws.Port = port;
                        break;
                    case "port":
                        ws.Port = (int)Long(v);
                        break;
                    case "host":
                    case "net":
                        ws.Host = Str(v);
                        break;
                    case "advertise":
                        ws.Advertise = Str(v);
                        break;
                    case "no_tls":
                        ws.NoTls = Bool(v);
                        break;
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
                        break;
                    case "same_origin":
                        ws.SameOrigin = Bool(v);
                        break;
                    case "allowed_origins":
                    case "allowed_origin":
                    case "allow_origins":
                    case "allow_origin":
                    case "origins":
                    case "origin":
                        ws.AllowedOrigins = v.Value switch
                        {
                            string one => [one],
                            List<ConfigValue> list => list.Select(i => i.Value as string ?? throw new WsBindException($"{i.Source}: error parsing allowed origins: unsupported type in array {i.GoTypeName}")).ToList(),
                            _ => throw new WsBindException($"{v.Source}: error parsing allowed origins: unsupported type {v.GoTypeName}"),
                        };
                        break;
                    case "handshake_timeout":
                        ws.HandshakeTimeout = v.Value switch
                        {
                            long seconds => TimeSpan.FromSeconds(seconds),
                            string text => GoDuration.TryParse(text, out var d, out var error) ? d : throw new WsBindException($"{v.Source}: {error}"),
                            _ => throw new WsBindException($"{v.Source}: error parsing handshake timeout: unsupported type {v.GoTypeName}"),
                        };
                        break;
                    case "compress":
                    case "compression":
                        ws.Compression = Bool(v);
                        break;
                    case "authorization":
                    case "authentication":
                        BindAuthorization(v, ws, errors);
                        break;
                    case "jwt_cookie":
                        ws.JwtCookie = Str(v);
                        break;
                    case "no_auth_user":
                        ws.NoAuthUser = Str(v);
                        break;
                    default:
                        if (!v.UsedAsVariable)
                        {
                            errors.Add($"{v.Source}: unknown field \"{key}\"");
                        }
                        break;
                }
            }
            catch (WsBindException e)
            {
                errors.Add(e.Message);
            }
        }
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

    private static void BindAuthorization(ConfigValue v, WebSocketOptions ws, List<string> errors)
    {
        foreach (var (key, item) in v.AsMap ?? [])
        {
            switch (key.ToLowerInvariant())
            {
                case "user":
                case "username":
                    ws.Username = item.Value as string;
                    break;
                case "pass":
                case "password":
                    ws.Password = item.Value as string;
                    break;
                case "token":
                    ws.Token = item.Value as string;
                    break;
                case "timeout":
                    ws.AuthTimeoutSeconds = item.Value switch { long l => l, double d => d, _ => 1 };
                    break;
                default:
                    if (!item.UsedAsVariable)
                    {
                        errors.Add($"{item.Source}: unknown field \"{key}\"");
                    }
                    break;
            }
        }
    }

    private static string Str(ConfigValue v) => v.Value as string ?? throw Mismatch(v, "string");
    private static bool Bool(ConfigValue v) => v.Value is bool b ? b : throw Mismatch(v, "bool");
    private static long Long(ConfigValue v) => v.Value is long l ? l : throw Mismatch(v, "int64");

    private static WsBindException Mismatch(ConfigValue v, string expected) =>
        new($"{v.Source}: interface conversion: interface {{}} is {v.GoTypeName}, not {expected}");

    private sealed class WsBindException(string message) : Exception(message);
}
