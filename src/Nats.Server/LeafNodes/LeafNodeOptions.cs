namespace Nats.Server.LeafNodes;

/// <summary>The <c>leafnodes {}</c> block (Go's LeafNodeOpts, 2.9.10): the accepting side (hub) and the remotes
/// this server dials (spoke).</summary>
internal sealed class LeafNodeOptions
{
    /// <summary>Go's DEFAULT_LEAF_NODE_RECONNECT: the pause between attempts to dial a remote.</summary>
    public static readonly TimeSpan DefaultReconnect = TimeSpan.FromSeconds(1);

    public string Host { get; set; } = "";

    /// <summary>Leaf port; 0 means no listener (remotes may still be dialled), -1 a free port.</summary>
    public int Port { get; set; }

    public string? Username { get; set; }
    public string? Password { get; set; }

    /// <summary>The account a connection authenticated by <see cref="Username"/> (or with no authorization) binds to.</summary>
    public string? Account { get; set; }

    public List<LeafUser> Users { get; set; } = [];
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    public string? Advertise { get; set; }
    public bool NoAdvertise { get; set; }
    public TimeSpan ReconnectInterval { get; set; } = DefaultReconnect;
    public List<LeafRemote> Remotes { get; set; } = [];

    /// <summary>The leaf port's <c>tls {}</c>: INFO says tls_required and the server side of the handshake follows it.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    public bool Listens => Port != 0;
    public bool Enabled => Listens || Remotes.Count > 0;
    public bool AuthRequired => !string.IsNullOrEmpty(Username) || Users.Count > 0;
}

/// <summary>One entry of <c>leafnodes.authorization.users</c>.</summary>
internal sealed record LeafUser(string Username, string Password, string? Account);

/// <summary>One entry of <c>leafnodes.remotes</c>: where to dial, with which account and credentials.</summary>
internal sealed class LeafRemote
{
    public List<Uri> Urls { get; set; } = [];

    /// <summary>The local account the connection binds to; empty means $G.</summary>
    public string LocalAccount { get; set; } = "";

    public string? Credentials { get; set; }
    public bool Hub { get; set; }
    public List<string> DenyImports { get; set; } = [];
    public List<string> DenyExports { get; set; } = [];
    public bool NoRandomize { get; set; }

    /// <summary>The remote's <c>tls {}</c> (certificate optional): TLS after the hub's INFO whether or not the hub asks.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    /// <summary>ws_compression: asked for in the upgrade; the SDK's client has no permessage-deflate with no context
    /// takeover on both sides as Go asks, so it is ignored (Go also falls back when the hub does not compress).</summary>
    public bool WebSocketCompression { get; set; }

    /// <summary>ws_no_masking: Go asks the hub to accept unmasked frames; the SDK's client always masks, which every hub accepts.</summary>
    public bool WebSocketNoMasking { get; set; }

    /// <summary>The URLs are ws:// or wss:// (Go requires all or none).</summary>
    public bool IsWebSocket => Urls.Count > 0 && Urls[0].Scheme is "ws" or "wss";
}
