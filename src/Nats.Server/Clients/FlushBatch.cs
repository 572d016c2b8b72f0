using Nats.Server.Hosting;

namespace Nats.Server.Clients;

/// <summary>
/// The clients one publisher's read batch queued data to (Go's pcd): each is flushed once at the end
/// of the batch instead of once per message, by the publisher itself when its queue can be written
/// without blocking (<see cref="OutboundQueue.TryFlushInline"/>), or else by waking its write loop.
/// Owned by one publishing thread (a read loop or an internal publisher), so it takes no lock.
/// </summary>
internal sealed class FlushBatch
{
    private readonly NatsServer _server;
    private ClientConnection[] _clients = new ClientConnection[16];
    private int _count;

    // Server-wide unique per batch, so a destination's FlushMark dedupes across publishers.
    private long _batchId;

    public FlushBatch(NatsServer server) => _server = server;

    /// <summary>Destinations waiting for the end of the batch.</summary>
    public int Count => _count;

    /// <summary>Adds a destination once per batch.</summary>
    public void Add(ClientConnection destination)
    {
        if (_batchId == 0)
        {
            _batchId = _server.NextBatchId();
        }
        if (destination.FlushMark == _batchId)
        {
            return;
        }
        destination.FlushMark = _batchId;
        if (_count == _clients.Length)
        {
            Array.Resize(ref _clients, _clients.Length * 2);
        }
        _clients[_count++] = destination;
    }

    /// <summary>Writes or wakes every destination of this batch and starts the next one.</summary>
    public void FlushAll()
    {
        for (var i = 0; i < _count; i++)
        {
            var outbound = _clients[i].Outbound;
            _clients[i] = null!;
            if (!outbound.TryFlushInline())
            {
                outbound.SignalFlush();
            }
        }
        _count = 0;
        _batchId = 0;
    }
}
