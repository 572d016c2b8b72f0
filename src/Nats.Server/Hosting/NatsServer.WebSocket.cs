using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.WebSocket;

namespace Nats.Server.Hosting;

/// <summary>Hooks the websocket {} listener (WebSocket/WebSocketListener) into the server's start, admission and shutdown.</summary>
internal sealed partial class NatsServer
{
    private WebSocketListener? _webSocket;
    private volatile ClientInfoLine? _webSocketInfo;
    private volatile IClientAuthenticator? _webSocketAuthenticator;

    /// <summary>The bound WebSocket port; 0 when there is no websocket {} listener.</summary>
    public int WebSocketPort => _webSocket?.Port ?? 0;

    private async Task StartWebSocketAsync(CancellationToken cancellationToken)
    {
        if (Options.WebSocket is not { Port: not 0 } ws)
        {
            return;
        }
        _webSocketAuthenticator = ws.AuthOverride ? new OptionsAuthenticator(WebSocketAuthOptions(Options, ws), _accounts.GeneratedNoAuthUser) : null;
        var authenticator = _webSocketAuthenticator ?? _authenticator;
        var listener = new WebSocketListener(this, ws, _logger);
        await listener.StartAsync(cancellationToken).ConfigureAwait(false);
        _webSocket = listener;
        var info = BuildInfo(Options, authenticator);
        // TLS of a WebSocket is the HTTPS of its upgrade, never a NATS-level upgrade: INFO says so.
        _webSocketInfo = new ClientInfoLine(new Protocol.ServerInfo
        {
            ServerId = info.ServerId,
            ServerName = info.ServerName,
            Version = info.Version,
            Proto = info.Proto,
            Go = info.Go,
            Host = info.Host,
            Port = info.Port,
            Headers = info.Headers,
            AuthRequired = info.AuthRequired || ws.AuthOverride,
            MaxPayload = info.MaxPayload,
        });
    }

    private async Task StopWebSocketAsync()
    {
        if (_webSocket is { } listener)
        {
            _webSocket = null;
            await listener.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The server's options with the websocket block's own credentials in place of the simple user/token.</summary>
    private static ServerOptions WebSocketAuthOptions(ServerOptions options, WebSocketOptions ws) => new()
    {
        Users = options.Users,
        Nkeys = options.Nkeys,
        DefaultPermissions = options.DefaultPermissions,
        Username = string.IsNullOrEmpty(ws.Username) ? options.Username : ws.Username,
        Password = string.IsNullOrEmpty(ws.Username) ? options.Password : ws.Password,
        AuthToken = string.IsNullOrEmpty(ws.Token) ? options.AuthToken : ws.Token,
        NoAuthUser = string.IsNullOrEmpty(ws.NoAuthUser) ? options.NoAuthUser : ws.NoAuthUser,
    };
}
