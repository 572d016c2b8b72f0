namespace Nats.Server.Routes;

/// <summary>The <c>cluster {}</c> block and the cluster flags (Go's ClusterOpts, 2.9.10).</summary>
public sealed class ClusterOptions
{
    /// <summary>Go's DEFAULT_ROUTE_CONNECT: the pause between attempts to dial a route.</summary>
    public static readonly TimeSpan ConnectRetryDelay = TimeSpan.FromSeconds(1);

    /// <summary>Cluster name; empty means a dynamic name (Go picks a random one and adopts a peer's).</summary>
    public string Name { get; set; } = "";

    public string Host { get; set; } = "";

    /// <summary>Route port; 0 with no host means clustering is off, -1 (stored as 0 with a host) a free port.</summary>
    public int Port { get; set; }

    /// <summary>Set when a listen address was configured (a port of 0 then means "any free port").</summary>
    public bool Enabled { get; set; }

    public string? Username { get; set; }
    public string? Password { get; set; }
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Explicit routes (retried forever unless connect_retries is set).</summary>
    public List<Uri> Routes { get; set; } = [];

    /// <summary>Do not tell clients about the other servers' client URLs.</summary>
    public bool NoAdvertise { get; set; }

    /// <summary>Attempts before an implicit (or, with a value, explicit) route is given up; 0 means Go's default.</summary>
    public int ConnectRetries { get; set; }

    /// <summary>host:port other servers should dial for our route port (cluster_advertise).</summary>
    public string? Advertise { get; set; }

    /// <summary>2.10's pool_size, accepted and ignored: toward 2.9 peers there is one route per server pair.</summary>
    public int PoolSize { get; set; }

    /// <summary>The cluster's <c>tls {}</c>: every route is secured with it, and (as Go) each side must show a certificate the CA vouches for.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    /// <summary>The cluster's <c>permissions {import, export}</c>; null when none are configured.</summary>
    internal RoutePermissions? Permissions { get; set; }

    public bool AuthRequired => !string.IsNullOrEmpty(Username);
}
