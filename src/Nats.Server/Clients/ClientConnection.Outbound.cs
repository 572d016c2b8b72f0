using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private readonly Lock _outLock = new();
    private readonly OutboundBuffer _out = new();
    private readonly AsyncSignal _flushSignal = new();

    // Clients that received something during the current read batch (Go's pcd): each is signalled
    // once when the batch is done instead of once per message.
    private ClientConnection[] _pendingClients = new ClientConnection[16];
    private int _pendingClientCount;
    private long _batchId;

    /// <summary>Id of the publisher batch that last queued to this client; dedupes the pending set.</summary>
    internal long FlushMark;

    private int _closed;
    private ClosedReason _closedReason;

    public bool IsClosed => Volatile.Read(ref _closed) != 0;
    public ClosedReason ClosedReason => _closedReason;
    public DateTime? StopTime { get; private set; }

    public long PendingBytes
    {
        get
        {
            lock (_outLock)
            {
                return _out.PendingBytes;
            }
        }
    }

    /// <summary>Queues a protocol line from this client's own read loop; flushed at the end of the batch.</summary>
    internal void EnqueueProtocol(ReadOnlySpan<byte> line)
    {
        lock (_outLock)
        {
            if (IsClosed)
            {
                return;
            }
            _out.Write(line);
        }
        AddPendingClient(this);
    }

    /// <summary>Queues a protocol line from outside the read loop (timers) and wakes the writer.</summary>
    internal void SendProtocolNow(ReadOnlySpan<byte> line)
    {
        lock (_outLock)
        {
            if (IsClosed)
            {
                return;
            }
            _out.Write(line);
        }
        SignalFlush();
    }

    internal void SignalFlush() => _flushSignal.Set();

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

    /// <summary>Copies one MSG/HMSG into the outbound buffer (the checks of <see cref="TryDeliver"/> are done).</summary>
    private bool Enqueue(
        ClientConnection publisher,
        Subscription subscription,
        ReadOnlySpan<byte> prefix,
        ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message)
    {
        var sid = subscription.Sid;
        var length = prefix.Length + sid.Length + suffix.Length + message.Length;
        var reachedMax = false;
        var pastMax = false;
        var slowConsumer = false;
        var dropped = false;
        var stall = false;
        lock (_outLock)
        {
            if (IsClosed || subscription.Closed)
            {
                return false;
            }
            var delivered = ++subscription.Delivered;
            var pending = _out.PendingBytes + Volatile.Read(ref _inFlightBytes) + length;
            if (subscription.Max > 0 && delivered > subscription.Max)
            {
                // A racing publisher already took the last allowed delivery.
                pastMax = true;
            }
            else if (pending > _options.MaxPending)
            {
                slowConsumer = true;
            }
            else if (_options.NoFastProducerStall && pending > DropThreshold && CanStall(publisher))
            {
                // The trade-off the operator chose: this subscriber misses the message, nobody waits.
                subscription.Delivered--;
                dropped = true;
            }
            else
            {
                var span = _out.GetSpan(length);
                prefix.CopyTo(span);
                var position = prefix.Length;
                sid.CopyTo(span[position..]);
                position += sid.Length;
                suffix.CopyTo(span[position..]);
                position += suffix.Length;
                message.CopyTo(span[position..]);
                _out.Advance(length);
                OutMsgs++;
                OutBytes += message.Length - 2;
                reachedMax = subscription.Max > 0 && delivered == subscription.Max;
                if (pending > StallThreshold && !_options.NoFastProducerStall && CanStall(publisher))
                {
                    _stallGate ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    stall = true;
                }
            }
        }

        if (slowConsumer)
        {
            _server.RecordSlowConsumer();
            _logger.LogInformation("{Client} - Slow Consumer Detected: MaxPending of {MaxPending} Exceeded", this, _options.MaxPending);
            CloseConnection(ClosedReason.SlowConsumerPendingBytes);
            return false;
        }
        if (dropped)
        {
            Interlocked.Increment(ref FastProducerDrops);
            _server.RecordFastProducerDrop();
            return false;
        }
        if (stall)
        {
            publisher.AddStall(this);
        }
        if (pastMax || reachedMax)
        {
            RemoveSubscription(subscription);
            if (pastMax)
            {
                return false;
            }
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
        if (Interlocked.CompareExchange(ref _closed, 1, 0) != 0)
        {
            return;
        }
        _closedReason = reason;
        StopTime = DateTime.UtcNow;
        var cutNow = reason is ClosedReason.SlowConsumerPendingBytes or ClosedReason.SlowConsumerWriteDeadline
            or ClosedReason.WriteError or ClosedReason.ReadError;
        if (cutNow)
        {
            lock (_outLock)
            {
                _out.Clear();
            }
            _transport.Abort();
        }
        else
        {
            // Flush what is queued (the -ERR), but like Go's flushAndClose never for longer than the write deadline.
            _ = Task.Delay(_options.WriteDeadline).ContinueWith(static (_, state) => ((ClientTransport)state!).Abort(), _transport, TaskScheduler.Default);
        }
        // Publishers waiting for this client to drain go back to full speed.
        ReleaseStallIfDrained();
        RemoveAllSubscriptions();
        _server.OnClientClosed(this);
        _flushSignal.Set();
    }
}
