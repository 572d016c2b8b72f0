using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private readonly OutboundQueue _outbound;

    // Clients that received something during the current read batch (Go's pcd): each is signalled
    // once when the batch is done instead of once per message.
    private ClientConnection[] _pendingClients = new ClientConnection[16];
    private int _pendingClientCount;
    private long _batchId;

    /// <summary>Id of the publisher batch that last queued to this client; dedupes the pending set.</summary>
    internal long FlushMark;

    private ClosedReason _closedReason;

    public bool IsClosed => _outbound.IsClosed;
    public ClosedReason ClosedReason => _closedReason;
    public DateTime? StopTime { get; private set; }

    public long PendingBytes => _outbound.PendingBytes;

    /// <summary>Messages and bytes queued to this client.</summary>
    public long OutMsgs => Volatile.Read(ref _outbound.OutMsgs);

    public long OutBytes => Volatile.Read(ref _outbound.OutBytes);

    /// <summary>Queues a protocol line from this client's own read loop; flushed at the end of the batch.</summary>
    internal void EnqueueProtocol(ReadOnlySpan<byte> line)
    {
        if (_outbound.Write(line))
        {
            AddPendingClient(this);
        }
    }

    /// <summary>Queues a protocol line from outside the read loop (timers) and wakes the writer.</summary>
    internal void SendProtocolNow(ReadOnlySpan<byte> line)
    {
        if (_outbound.Write(line))
        {
            SignalFlush();
        }
    }

    internal void SignalFlush() => _outbound.SignalFlush();

    /// <summary>The write side made progress: counts as activity for the ping timer.</summary>
    internal void NoteWriteActivity() => Volatile.Write(ref _lastActivityTicks, Environment.TickCount64);

    internal void OnWriteLoopFailed(Exception ex)
    {
        _logger.LogError(ex, "{Client} - Unexpected error in write loop", this);
        CloseConnection(ClosedReason.WriteError);
    }

    /// <summary>
    /// Queues one message for this client on behalf of a publisher (called on the publisher's read loop).
    /// Returns false when nothing was queued: echo off, closed, or the auto-unsubscribe limit passed.
    /// </summary>
    internal bool TryDeliver(
        ClientConnection publisher,
        Subscription subscription,
        ReadOnlySpan<byte> prefix,
        ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message,
        int headerSize,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> reply)
    {
        if (publisher == this && !_echo)
        {
            return false;
        }
        if (_permissions is not null && !_permissions.AllowDelivery(subject, reply))
        {
            return false;
        }
        if (headerSize > 0 && !_headers)
        {
            return DeliverWithoutHeaders(publisher, subscription, subject, reply, message[headerSize..]);
        }
        return Enqueue(publisher, subscription, prefix, suffix, message);
    }

    /// <summary>Copies one MSG/HMSG into the outbound queue (the checks of <see cref="TryDeliver"/> are done).</summary>
    private bool Enqueue(
        ClientConnection publisher,
        Subscription subscription,
        ReadOnlySpan<byte> prefix,
        ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message)
    {
        var options = _options;
        var result = _outbound.AppendMessage(subscription, prefix, suffix, message, options.MaxPending, options.NoFastProducerStall,
            CanStall(publisher), out var stall);
        switch (result)
        {
            case AppendResult.Closed:
                return false;
            case AppendResult.SlowConsumer:
                _server.RecordSlowConsumer();
                _logger.LogInformation("{Client} - Slow Consumer Detected: MaxPending of {MaxPending} Exceeded", this, options.MaxPending);
                CloseConnection(ClosedReason.SlowConsumerPendingBytes);
                return false;
            case AppendResult.Dropped:
                Interlocked.Increment(ref _fastProducerDrops);
                _server.RecordFastProducerDrop();
                return false;
            case AppendResult.PastMax:
                RemoveSubscription(subscription);
                return false;
            case AppendResult.QueuedReachedMax:
                RemoveSubscription(subscription);
                break;
        }
        if (stall)
        {
            publisher.AddStall(this);
        }
        publisher.AddPendingClient(this);
        return true;
    }

    /// <summary>A client that did not ask for headers gets the body only, as a plain MSG (Go strips them too).</summary>
    private bool DeliverWithoutHeaders(ClientConnection publisher, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> body)
    {
        var needed = MsgLine.MaxLength(subject.Length, reply.Length, 0);
        byte[]? rented = null;
        var span = needed <= 512 ? stackalloc byte[512] : (rented = System.Buffers.ArrayPool<byte>.Shared.Rent(needed));
        var position = MsgLine.WriteSplit(span, subject, reply, replySet: false, headerSize: 0, body.Length - 2, out var prefixLength);
        var delivered = Enqueue(publisher, subscription, span[..prefixLength], span[prefixLength..position], body);
        if (rented is not null)
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
        return delivered;
    }

    /// <summary>Adds a destination to this read loop's pending-flush set, once per batch.</summary>
    internal void AddPendingClient(ClientConnection destination)
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
        if (_pendingClientCount == _pendingClients.Length)
        {
            Array.Resize(ref _pendingClients, _pendingClients.Length * 2);
        }
        _pendingClients[_pendingClientCount++] = destination;
    }

    /// <summary>
    /// Ends the connection. Protocol errors flush what is queued (the -ERR) before the socket closes;
    /// slow consumers and broken sockets are cut at once. Safe to call from any thread, once or many times.
    /// </summary>
    internal void CloseConnection(ClosedReason reason)
    {
        if (!_outbound.TryClose())
        {
            return;
        }
        _closedReason = reason;
        StopTime = DateTime.UtcNow;
        var cutNow = reason is ClosedReason.SlowConsumerPendingBytes or ClosedReason.SlowConsumerWriteDeadline
            or ClosedReason.WriteError or ClosedReason.ReadError;
        if (cutNow)
        {
            _outbound.Discard();
            _transport.Abort();
        }
        else
        {
            // Flush what is queued (the -ERR), but like Go's flushAndClose never for longer than the write deadline.
            _ = Task.Delay(_options.WriteDeadline).ContinueWith(static (_, state) => ((ClientTransport)state!).Abort(), _transport, TaskScheduler.Default);
        }
        // Publishers waiting for this client to drain go back to full speed.
        _outbound.ReleaseStallIfDrained();
        RemoveAllSubscriptions();
        _server.OnClientClosed(this);
        _outbound.SignalFlush();
    }
}
