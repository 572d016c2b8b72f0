namespace Nats.Server.Clients;

/// <summary>
/// Writes the server's protocol lines to one client (+OK, PONG, PING, -ERR, INFO): into its
/// <see cref="OutboundQueue"/>, flushed either at the end of the read batch that produced them or at
/// once when they come from outside the read loop (timers, reload). Messages take
/// <see cref="ClientDelivery"/> instead.
/// </summary>
internal sealed class ProtocolWriter
{
    private readonly ClientConnection _client;
    private readonly OutboundQueue _outbound;
    private readonly FlushBatch _flushBatch;

    public ProtocolWriter(ClientConnection client, OutboundQueue outbound, FlushBatch flushBatch)
    {
        _client = client;
        _outbound = outbound;
        _flushBatch = flushBatch;
    }

    /// <summary>Queues a line from this client's own read loop; written with the rest of the batch.</summary>
    public void Enqueue(ReadOnlySpan<byte> line)
    {
        if (_outbound.Write(line))
        {
            _flushBatch.Add(_client);
        }
    }

    /// <summary>Queues a line from outside the read loop and wakes the writer.</summary>
    public void SendNow(ReadOnlySpan<byte> line)
    {
        if (_outbound.Write(line))
        {
            _outbound.SignalFlush();
        }
    }
}
