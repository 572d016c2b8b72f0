using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.Transport;

namespace Nats.Server.Mqtt;

/// <summary>
/// The MQTT connection's side of the shared <see cref="OutboundQueue"/>: what a NATS client's
/// <see cref="ClientDelivery"/> is to its queue, for whole MQTT packets. A delivery is copied under the
/// queue's lock with the same limits (max_pending, the stall threshold in chunk memory, the
/// no_fast_producer_stall drop past three quarters), joins the publisher's <see cref="FlushBatch"/>
/// (written inline at the end of its batch when the transport can, else by the write loop), and a
/// publisher past the threshold waits here until the queue drains. A connection that writes nothing for a
/// second stops pausing publishers (it may only be starved of CPU) and is cut at max_pending or the write
/// deadline, as a client is; with write_deadline at or below a second the wait is the deadline and the
/// connection is cut when it passes. Control packets (CONNACK, acks, PINGRESP)
/// are queued without limits and wake the write loop.
/// </summary>
internal sealed class MqttOutbound : IDrainable
{
    private readonly OutboundQueue _queue;
    private readonly Func<long> _maxPending;
    private static readonly TimeSpan MaxStuckTime = TimeSpan.FromSeconds(1);

    private readonly Func<TimeSpan> _writeDeadline;
    private readonly Func<bool> _noFastProducerStall;
    private long _stalls;

    /// <param name="maxPending">Read per message, as the other two: a reload applies at once.</param>
    /// <param name="writeDeadline">write_deadline: a waiting publisher gives up after a second (or this, if lower) without a byte written.</param>
    public MqttOutbound(IOutboundOwner owner, ClientTransport transport, Func<long> maxPending, Func<TimeSpan> writeDeadline, Func<bool> noFastProducerStall)
    {
        _queue = new OutboundQueue(owner, transport);
        _maxPending = maxPending;
        _writeDeadline = writeDeadline;
        _noFastProducerStall = noFastProducerStall;
    }

    /// <summary>Raised for each message dropped under no_fast_producer_stall.</summary>
    public event Action? FastProducerDrop;

    /// <summary>Raised when a delivery would pass max_pending (false) or a waiting publisher saw no write progress for the write deadline (true).</summary>
    public event Action<bool>? SlowConsumer;

    public OutboundQueue Queue => _queue;

    /// <summary>Times this connection's full queue paused a publisher.</summary>
    public long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Queues a control packet and wakes the write loop; false once the connection is closed.</summary>
    public bool Enqueue(ReadOnlySpan<byte> packet)
    {
        if (!_queue.Write(packet))
        {
            return false;
        }
        _queue.SignalFlush();
        return true;
    }

    /// <summary>
    /// Queues one PUBLISH for <paramref name="origin"/> (null: the connection's own answers, such as a
    /// retained message on SUBSCRIBE). <paramref name="canStall"/>: the publisher may wait;
    /// <paramref name="mayDrop"/>: not a stored message's delivery, which no_fast_producer_stall never
    /// drops. False when nothing was queued.
    /// </summary>
    public bool Deliver(ReadOnlySpan<byte> packet, int payloadBytes, MessageOrigin? origin, bool canStall, bool mayDrop)
    {
        var dropFast = canStall && mayDrop && _noFastProducerStall();
        var result = _queue.AppendPacket(packet, payloadBytes, _maxPending(), dropFast, canStall, out var stall);
        switch (result)
        {
            case AppendResult.Closed:
                return false;
            case AppendResult.SlowConsumer:
                SlowConsumer?.Invoke(false);
                return false;
            case AppendResult.Dropped:
                FastProducerDrop?.Invoke();
                return false;
        }
        if (origin is null)
        {
            _queue.SignalFlush();
            return true;
        }
        if (stall)
        {
            origin.StallOn(this);
        }
        origin.FlushBatch.Add(_queue);
        return true;
    }

    /// <summary>The bound a waiting publisher gives a connection that writes nothing: a second, or write_deadline if lower.</summary>
    public TimeSpan StuckBound
    {
        get
        {
            var deadline = _writeDeadline();
            return deadline < MaxStuckTime ? deadline : MaxStuckTime;
        }
    }

    /// <summary>A publisher's wait (see <see cref="StallList"/>), as on a client's <see cref="ClientDelivery"/>.</summary>
    public async ValueTask WaitUntilDrainedAsync()
    {
        Interlocked.Increment(ref _stalls);
        var bound = StuckBound;
        if (await _queue.WaitUntilDrainedAsync(bound).ConfigureAwait(false) || _queue.IsClosed)
        {
            return;
        }
        if (bound < _writeDeadline())
        {
            // Short of the write deadline the reader may only be starved of CPU: publishers go on, and
            // max_pending or the write deadline (the heartbeat) cut it if it really stopped.
            _queue.SuspendStalls();
            return;
        }
        SlowConsumer?.Invoke(true);
    }
}
