namespace Nats.LoadBench.Servers;

/// <summary>Where a running server (or the sink) listens; 0 for listeners not configured.</summary>
internal sealed record Endpoint(string Host, int Port, int MqttPort = 0, int WsPort = 0, bool Tls = false);
