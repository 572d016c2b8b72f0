using Nats.Server.Hosting;

namespace Nats.Server.Clients;

/// <summary>Work a receiver postpones to the end of the publisher's open batch (see <see cref="FlushBatch.Open"/>).</summary>
internal interface IBatchEndListener
{
    /// <summary>Called once per batch it registered for, on the publishing thread.</summary>
    void OnBatchEnd();
}

/// <summary>
/// One publisher's batch (Go's pcd): the outbound queues it fed (clients and routes), each flushed
/// once at the end of the batch instead of once per message, by the publisher itself when the queue
/// can be written without blocking (<see cref="OutboundQueue.TryFlushInline"/>), or else by waking its
/// write loop. While a client's read loop runs the commands of one read (<see cref="Open"/>), receivers
/// that answer each message (JetStream's PubAcks) can also postpone their answers to its end
/// (<see cref="AtEnd"/>): one publish lock and one write per receiving client for the read. Owned by
/// one publishing thread (a read loop or an internal publisher), so it takes no lock.
/// </summary>
internal sealed class FlushBatch
{
    private readonly NatsServer _server;
    private OutboundQueue[] _queues = new OutboundQueue[16];
    private int _count;
    private int _depth;
    private List<IBatchEndListener>? _listeners;

    // Server-wide unique per batch, so a destination's FlushMark dedupes across publishers.
    private long _batchId;

    public FlushBatch(NatsServer server) => _server = server;

    /// <summary>Destinations waiting for the end of the batch.</summary>
    public int Count => _count;

    /// <summary>True while a read's commands run: receivers may postpone answers with <see cref="AtEnd"/>.
    /// Outside (timers, internal publishers) answers go out at once.</summary>
    public bool IsOpen => _depth > 0;

    /// <summary>Opens the batch for the commands of one read; disposing the outermost scope runs the listeners.</summary>
    public Scope Open()
    {
        _depth++;
        return new Scope(this);
    }

    /// <summary>Runs <paramref name="listener"/> when the open batch closes; the caller registers once per batch.</summary>
    public void AtEnd(IBatchEndListener listener) => (_listeners ??= []).Add(listener);

    /// <summary>Adds a client once per batch.</summary>
    public void Add(ClientConnection destination) => Add(destination.Outbound);

    /// <summary>Adds an outbound queue (a client's or a route's) once per batch.</summary>
    public void Add(OutboundQueue destination)
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
        if (_count == _queues.Length)
        {
            Array.Resize(ref _queues, _queues.Length * 2);
        }
        _queues[_count++] = destination;
    }

    /// <summary>Writes or wakes every destination of this batch and starts the next one.</summary>
    public void FlushAll()
    {
        for (var i = 0; i < _count; i++)
        {
            var outbound = _queues[i];
            _queues[i] = null!;
            if (!outbound.TryFlushInline())
            {
                outbound.SignalFlush();
            }
        }
        _count = 0;
        _batchId = 0;
    }

    private void Close()
    {
        if (_depth > 1)
        {
            _depth--;
            return;
        }
        var listeners = _listeners;
        try
        {
            // Closed before the listeners run: what they publish is not deferred again.
            _depth = 0;
            if (listeners is null)
            {
                return;
            }
            Exception? first = null;
            for (var i = 0; i < listeners.Count; i++)
            {
                // Every listener runs even if one fails: each owes answers to clients.
                try
                {
                    listeners[i].OnBatchEnd();
                }
                catch (Exception e)
                {
                    first ??= e;
                }
            }
            if (first is not null)
            {
                System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(first);
            }
        }
        finally
        {
            listeners?.Clear();
        }
    }

    public readonly ref struct Scope(FlushBatch batch)
    {
        public void Dispose() => batch.Close();
    }
}
