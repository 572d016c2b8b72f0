namespace Nats.Server.Configuration;

/// <summary>
/// Every setting the server understands, with the Go server's defaults (server/const.go).
/// Filled from the command line and the configuration file; the command line wins.
/// </summary>
public sealed class ServerOptions
{
    public const int DefaultPort = 4222;
    public const int DefaultMaxPayload = 1024 * 1024;
    public const int DefaultMaxControlLine = 4096;
    public const int DefaultMaxConnections = 64 * 1024;
    public const long DefaultMaxPending = 64L * 1024 * 1024;
    public static readonly TimeSpan DefaultLameDuckDuration = TimeSpan.FromMinutes(2);
    public static readonly TimeSpan DefaultLameDuckGracePeriod = TimeSpan.FromSeconds(10);

    /// <summary>Interface to listen on for clients ("0.0.0.0" for all, like Go).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>Client port; 0 picks a free port (Go uses -1 for "random"; both are accepted from the CLI).</summary>
    public int Port { get; set; } = DefaultPort;

    public string? ServerName { get; set; }

    /// <summary>The cluster {} block and the cluster flags: routes to other servers.</summary>
    public Routes.ClusterOptions Cluster { get; set; } = new();

    /// <summary>The <c>gateway {}</c> block.</summary>
    internal Gateways.GatewayOptions Gateway { get; set; } = new();

    /// <summary>The <c>leafnodes {}</c> block.</summary>
    internal LeafNodes.LeafNodeOptions LeafNodes { get; set; } = new();

    /// <summary>Host advertised to clients in INFO connect_urls (client_advertise).</summary>
    public string? ClientAdvertise { get; set; }

    public int MaxPayload { get; set; } = DefaultMaxPayload;
    public int MaxControlLine { get; set; } = DefaultMaxControlLine;
    public int MaxConnections { get; set; } = DefaultMaxConnections;

    /// <summary>Per-connection subscription limit; 0 means unlimited.</summary>
    public int MaxSubscriptions { get; set; }

    /// <summary>Outbound bytes a client may have queued before it is cut as a slow consumer.</summary>
    public long MaxPending { get; set; } = DefaultMaxPending;

    public TimeSpan WriteDeadline { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// no_fast_producer_stall (Go 2.11+): a message that would stall its publisher behind a full
    /// subscriber is dropped for that subscriber instead; the default pauses the publisher.
    /// </summary>
    public bool NoFastProducerStall { get; set; }
    public TimeSpan PingInterval { get; set; } = TimeSpan.FromMinutes(2);
    public int MaxPingsOut { get; set; } = 2;
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>When true INFO advertises headers:false and HPUB is refused.</summary>
    public bool NoHeaderSupport { get; set; }

    // Logging
    public bool Debug { get; set; }
    public bool Trace { get; set; }
    public bool TraceVerbose { get; set; }
    public bool Logtime { get; set; } = true;
    public bool LogtimeUtc { get; set; }
    public string? LogFile { get; set; }
    public long LogSizeLimit { get; set; }
    public int MaxTracedMsgLen { get; set; }

    public string? PidFile { get; set; }
    public string? PortsFileDir { get; set; }

    // Simple single-user or token authorization (the full users/accounts model comes with the auth issue).
    public string? Username { get; set; }
    public string? Password { get; set; }
    public string? AuthToken { get; set; }

    /// <summary>authorization.users entries with a user name (null: none configured; empty: nobody may connect).</summary>
    public List<Auth.User>? Users { get; set; }

    /// <summary>authorization.users entries with an nkey.</summary>
    public List<Auth.NkeyUser>? Nkeys { get; set; }

    /// <summary>authorization.default_permissions: applied to users that have none of their own.</summary>
    public Auth.Permissions? DefaultPermissions { get; set; }

    /// <summary>no_auth_user: the user a client without credentials is connected as.</summary>
    public string? NoAuthUser { get; set; }

    /// <summary>The <c>accounts {}</c> block (users of an account are in <see cref="Users"/>/<see cref="Nkeys"/> with their Account set).</summary>
    public List<Accounts.AccountOptions> Accounts { get; } = [];

    /// <summary>system_account: the account used for $SYS requests and events; "$SYS" is created when unset.</summary>
    public string? SystemAccount { get; set; }

    /// <summary>no_system_account: run without a system account.</summary>
    public bool NoSystemAccount { get; set; }

    /// <summary>Subject mappings of the global account (the top-level <c>mappings</c> block).</summary>
    public List<Mappings.SubjectMapping> Mappings { get; set; } = [];

    /// <summary>The client port's <c>tls {}</c> block (or --tls flags); null: plain text.</summary>
    public Tls.TlsOptions? Tls { get; set; }

    /// <summary>The loaded certificates of <see cref="Tls"/>, set whenever <see cref="Tls"/> is.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    /// <summary>allow_non_tls: with tls {}, plain clients are served on the same port (INFO says tls_available).</summary>
    public bool AllowNonTls { get; set; }

    /// <summary>True when authorization.timeout was given; otherwise TLS raises the default, as Go's getDefaultAuthTimeout.</summary>
    public bool AuthTimeoutExplicit { get; set; }

    /// <summary>The <c>websocket {}</c> block; null or Port 0: no WebSocket listener.</summary>
    public WebSocket.WebSocketOptions? WebSocket { get; set; }

    /// <summary>Monitoring HTTPS port (https / https_port; 0 = off), served with the <c>tls {}</c> certificate.</summary>
    public int HttpsPort { get; set; }

    /// <summary>Monitoring HTTP port (0 = off).</summary>
    public int HttpPort { get; set; }
    public string? HttpHost { get; set; }

    /// <summary>http_base_path: every monitoring endpoint is served under this prefix (as given; normalised when used).</summary>
    public string? HttpBasePath { get; set; }

    /// <summary>
    /// max_closed_clients: how many closed connections /connz keeps. The Go server has the setting since
    /// 2.9 but reads the configuration key only since 2.11; 0 means the default.
    /// </summary>
    public int MaxClosedClients { get; set; }

    /// <summary>lame_duck_duration: the time over which clients are closed in lame duck mode.</summary>
    public TimeSpan LameDuckDuration { get; set; } = DefaultLameDuckDuration;

    /// <summary>lame_duck_grace_period: the wait, after the ldm INFO, before the first client is closed.</summary>
    public TimeSpan LameDuckGracePeriod { get; set; } = DefaultLameDuckGracePeriod;

    /// <summary>JetStream: -js, -sd and the <c>jetstream {}</c> block.</summary>
    public JetStream.Configuration.JetStreamOptions JetStream { get; set; } = new();

    /// <summary>MQTT: the <c>mqtt {}</c> block (port 0: off).</summary>
    public Mqtt.MqttOptions Mqtt { get; set; } = new();

    /// <summary>Path of the configuration file the options were read from, if any.</summary>
    public string? ConfigFile { get; set; }

    /// <summary>
    /// Configuration entries the Go server accepts but this server does not implement yet (jetstream,
    /// cluster, tls, accounts, authorization.users, ...), kept raw by dotted path ("authorization.users")
    /// so later features can bind them; the executable warns about each one at startup.
    /// </summary>
    /// <summary>Operator mode: trusted operators and keys, the account resolver and its preloads.</summary>
    internal Auth.Jwt.OperatorOptions Operator { get; } = new();

    /// <summary>authorization { auth_callout { ... } } (nats-server 2.10); null when not configured.</summary>
    internal Auth.Callout.AuthCalloutOptions? AuthCallout { get; set; }

    internal Dictionary<string, ConfigValue> UnsupportedConfig { get; } = new(StringComparer.Ordinal);
}
