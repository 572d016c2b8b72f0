namespace Nats.LoadBench.Servers;

/// <summary>Listeners and subsystems a scenario needs the server to be started with.</summary>
[Flags]
internal enum Features
{
    None = 0,
    JetStream = 1,
    Mqtt = 2,
    Tls = 4,
    WebSocket = 8,
}
