namespace Nats.Server.WebSocket;

/// <summary>The <c>websocket {}</c> block (Go's WebsocketOpts in 2.9.10).</summary>
public sealed class WebSocketOptions
{
    public string Host { get; set; } = "";

    /// <summary>0: no WebSocket listener; -1: a free port.</summary>
    public int Port { get; set; }

    public string? Advertise { get; set; }

    /// <summary>no_tls: plain ws:// (Go refuses a listener with neither tls {} nor no_tls).</summary>
    public bool NoTls { get; set; }

    public Tls.TlsOptions? Tls { get; set; }
    public Tls.TlsServerContext? TlsContext { get; set; }

    public bool SameOrigin { get; set; }
    public List<string>? AllowedOrigins { get; set; }

    /// <summary>handshake_timeout: the HTTP upgrade must arrive within this time (0: Go's default, the TLS timeout or 2 s).</summary>
    public TimeSpan HandshakeTimeout { get; set; }

    /// <summary>compression: negotiate permessage-deflate with clients that offer it.</summary>
    public bool Compression { get; set; }

    // authorization {} of the block: overrides the server's simple user/token for WebSocket clients.
    public string? Username { get; set; }
    public string? Password { get; set; }
    public string? Token { get; set; }
    public double AuthTimeoutSeconds { get; set; }

    public string? NoAuthUser { get; set; }

    /// <summary>jwt_cookie: accepted; JWT (operator mode) authentication is not implemented yet.</summary>
    public string? JwtCookie { get; set; }

    /// <summary>True when the block sets its own credentials (Go's websocket.authOverride).</summary>
    public bool AuthOverride => !string.IsNullOrEmpty(Username) || !string.IsNullOrEmpty(Token) || !string.IsNullOrEmpty(NoAuthUser);
}
