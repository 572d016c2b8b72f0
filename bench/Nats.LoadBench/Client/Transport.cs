namespace Nats.LoadBench.Client;

/// <summary>How a NATS client reaches the server: the same protocol code runs over each.</summary>
internal enum Transport
{
    Plain,
    Tls,
    WebSocket,
}
