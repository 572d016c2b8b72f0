namespace Nats.Server.Gateways;

/// <summary>The <c>gateway {}</c> block (Go's GatewayOpts, 2.9.10): this cluster's gateway name and port, and the
/// remote gateways (other clusters) every server of the cluster dials.</summary>
internal sealed class GatewayOptions
{
    public string Name { get; set; } = "";
    public string Host { get; set; } = "";

    /// <summary>Gateway port; 0 means gateways are off, -1 a free port.</summary>
    public int Port { get; set; }

    public string? Username { get; set; }
    public string? Password { get; set; }
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);
    public string? Advertise { get; set; }
    public int ConnectRetries { get; set; }
    public bool RejectUnknown { get; set; }
    public List<GatewayRemote> Gateways { get; set; } = [];

    /// <summary>The gateway's <c>tls {}</c>: inbound gateways are secured with it, and outbound ones without their own.
    /// As Go, each side must show a certificate the CA vouches for.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    /// <summary>Go's gateway.enabled: a name and a port.</summary>
    public bool Enabled => !string.IsNullOrEmpty(Name) && Port != 0;
    public bool AuthRequired => !string.IsNullOrEmpty(Username);
}

/// <summary>One entry of <c>gateway.gateways</c>: a remote cluster and where to reach it.</summary>
internal sealed class GatewayRemote
{
    public string Name { get; set; } = "";
    public List<Uri> Urls { get; set; } = [];

    /// <summary>This remote's own <c>tls {}</c>, used instead of the gateway's when dialling it.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }
}
