using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private readonly OutboundQueue _outbound;

    private static readonly TimeSpan MaxStuckTime = TimeSpan.FromSeconds(1);

    // Clients that received something during the current read batch, flushed once when it ends.
    private readonly FlushBatch _flushBatch;

    // Subscribers this publisher must wait for before it parses on (owned by its read loop).
    private readonly StallList _stalledOn = new();
    private long _stalls;
    private long _fastProducerDrops;

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

    /// <summary>Times this client's full queue paused a publisher.</summary>
    public long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Messages dropped for this client under no_fast_producer_stall.</summary>
    public long FastProducerDrops => Interlocked.Read(ref _fastProducerDrops);

    internal OutboundQueue Outbound => _outbound;

    /// <summary>Queues a protocol line from this client's own read loop; flushed at the end of the batch.</summary>
    internal void EnqueueProtocol(ReadOnlySpan<byte> line)
    {
        if (_outbound.Write(line))
        {
            _flushBatch.Add(this);
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
    internal void NoteWriteActivity() => _ping.NoteActivity(Environment.TickCount64);

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
        if (publisher == this && !_settings.Echo)
        {
            return false;
        }
        if (_auth.Permissions is { } permissions && !permissions.AllowDelivery(subject, reply))
        {
            return false;
        }
        if (headerSize > 0 && !_settings.Headers)
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
        var options = _settings.Options;
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
            publisher._stalledOn.Add(this);
        }
        publisher._flushBatch.Add(this);
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

    /// <summary>Only a client's own read loop can be paused; the server's internal publisher and self-delivery never are.</summary>
    private bool CanStall(ClientConnection publisher) => publisher != this && publisher._settings.CanStall;

    private TimeSpan StuckBound => _settings.Options.WriteDeadline < MaxStuckTime ? _settings.Options.WriteDeadline : MaxStuckTime;

    /// <summary>
    /// A publisher waits for this subscriber to drain (see <see cref="StallList"/>); the subscriber is
    /// cut as a slow consumer when it writes nothing for <see cref="StuckBound"/>.
    /// </summary>
    internal async ValueTask WaitUntilDrainedAsync()
    {
        Interlocked.Increment(ref _stalls);
        _server.RecordStall();
        var bound = StuckBound;
        if (await _outbound.WaitUntilDrainedAsync(bound).ConfigureAwait(false) || IsClosed)
        {
            return;
        }
        _server.RecordSlowConsumer();
        _logger.LogInformation("{Client} - Slow Consumer Detected: no write progress for {Bound} with {Pending} bytes pending",
            this, bound, _outbound.PendingAndInFlight);
        CloseConnection(ClosedReason.SlowConsumerPendingBytes);
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
            _ = Task.Delay(_settings.Options.WriteDeadline).ContinueWith(static (_, state) => ((ClientTransport)state!).Abort(), _transport, TaskScheduler.Default);
        }
        // Publishers waiting for this client to drain go back to full speed.
        _outbound.ReleaseStallIfDrained();
        _subscriptions.RemoveAll(Account);
        _server.OnClientClosed(this);
        _outbound.SignalFlush();
    }
}
