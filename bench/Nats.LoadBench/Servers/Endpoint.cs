namespace Nats.LoadBench.Servers;

/// <summary>Where a running server (or the sink) listens; 0 for listeners not configured. For a cluster row,
/// <see cref="Cluster"/> lists every server (this one first) and <see cref="MonitorPort"/> its HTTP monitor.</summary>
internal sealed record Endpoint(string Host, int Port, int MqttPort = 0, int WsPort = 0, bool Tls = false)
{
    public IReadOnlyList<Endpoint>? Cluster { get; init; }

    public int MonitorPort { get; init; }

    /// <summary>Our server rather than Go's: a row may speak what only ours does (MQTT 5) and fall back to 3.1.1 for Go.</summary>
    public bool Ours { get; init; }

    /// <summary>Server <paramref name="index"/> of the cluster (this one when not clustered).</summary>
    public Endpoint Server(int index) => index == 0 ? this : Cluster![index];
}
