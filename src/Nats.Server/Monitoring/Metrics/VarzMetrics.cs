using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>
/// The numeric /varz fields as prometheus-nats-exporter names them: gnatsd_varz_&lt;json key&gt; with a
/// server_id label. Values come from the very /varz document the HTTP monitor serves, so the two agree
/// by construction. Like the exporter, every family is a gauge (its dashboards and alerts apply rate()
/// to them), which also keeps the names identical in the classic and OpenMetrics formats.
/// </summary>
internal sealed class VarzMetrics : IMetricsSet
{
    private const string Prefix = "gnatsd_varz_";

    private readonly Func<Varz> _varz;
    private readonly string _serverId;
    private readonly (Gauge.Child Gauge, Func<Varz, double> Read)[] _fields;
    private readonly Gauge _serverName;
    private readonly Gauge _version;
    private string? _reportedName;

    public VarzMetrics(IMetricFactory factory, string serverId, Func<Varz> varz)
    {
        _varz = varz;
        _serverId = serverId;
        _fields =
        [
            Field(factory, "connections", "Clients currently connected", v => v.Connections),
            Field(factory, "total_connections", "Clients connected since the server started", v => v.TotalConnections),
            Field(factory, "subscriptions", "Subscriptions across all accounts", v => v.Subscriptions),
            Field(factory, "in_msgs", "Messages received from clients", v => v.InMsgs),
            Field(factory, "out_msgs", "Messages delivered to clients", v => v.OutMsgs),
            Field(factory, "in_bytes", "Payload bytes received from clients", v => v.InBytes),
            Field(factory, "out_bytes", "Payload bytes delivered to clients", v => v.OutBytes),
            Field(factory, "slow_consumers", "Clients closed or dropped as slow consumers", v => v.SlowConsumers),
            Field(factory, "mem", "Resident memory of the process in bytes", v => v.Mem),
            Field(factory, "cpu", "Process CPU usage in percent", v => v.Cpu),
            Field(factory, "cores", "Logical processors", v => v.Cores),
            Field(factory, "gomaxprocs", "Processors the runtime schedules on (Environment.ProcessorCount)", v => v.MaxProcs),
            Field(factory, "routes", "Cluster routes", v => v.Routes),
            Field(factory, "remotes", "Remote servers in the cluster", v => v.Remotes),
            Field(factory, "leafnodes", "Leaf node connections", v => v.LeafNodes),
            Field(factory, "outbound_gateways", "Outbound gateway connections (one per remote cluster)", v => v.OutboundGateways),
            Field(factory, "inbound_gateways", "Inbound gateway connections", v => v.InboundGateways),
            Field(factory, "max_connections", "Configured max_connections", v => v.MaxConnections),
            Field(factory, "max_subscriptions", "Configured max_subscriptions (0: unlimited)", v => v.MaxSubscriptions),
            Field(factory, "max_payload", "Configured max_payload in bytes", v => v.MaxPayload),
            Field(factory, "max_pending", "Configured max_pending in bytes", v => v.MaxPending),
            Field(factory, "max_control_line", "Configured max_control_line in bytes", v => v.MaxControlLine),
            Field(factory, "ping_interval", "Configured ping_interval in nanoseconds", v => v.PingInterval),
            Field(factory, "ping_max", "Configured ping_max", v => v.PingMax),
            Field(factory, "write_deadline", "Configured write_deadline in nanoseconds", v => v.WriteDeadline),
            Field(factory, "auth_timeout", "Configured auth timeout in seconds", v => v.AuthTimeout),
            Field(factory, "port", "Client port", v => v.Port),
            Field(factory, "http_port", "Monitoring port as configured", v => v.HttpPort),
            Field(factory, "start", "Start time in seconds since the Unix epoch", v => UnixSeconds(v.Start)),
            Field(factory, "config_load_time", "Last configuration (re)load in seconds since the Unix epoch", v => UnixSeconds(v.ConfigLoadTime)),
        ];
        // The exporter turns the string fields it knows into info-style gauges with a "value" label.
        _serverName = factory.CreateGauge(Prefix + "server_name", "Server name (value label), always 1", ["server_id", "value"]);
        _version = factory.CreateGauge(Prefix + "version", "NATS feature level version (value label), always 1", ["server_id", "value"]);
    }

    public void Update()
    {
        var varz = _varz();
        foreach (var (gauge, read) in _fields)
        {
            gauge.Set(read(varz));
        }
        if (_reportedName != varz.ServerName)
        {
            if (_reportedName is not null)
            {
                _serverName.RemoveLabelled(_serverId, _reportedName);
            }
            _serverName.WithLabels(_serverId, varz.ServerName).Set(1);
            _reportedName = varz.ServerName;
        }
        _version.WithLabels(_serverId, varz.Version).Set(1);
    }

    private (Gauge.Child, Func<Varz, double>) Field(IMetricFactory factory, string key, string help, Func<Varz, double> read) =>
        (factory.CreateGauge(Prefix + key, help, ["server_id"]).WithLabels(_serverId), read);

    private static double UnixSeconds(DateTime time) => (time.ToUniversalTime() - DateTime.UnixEpoch).TotalSeconds;
}
