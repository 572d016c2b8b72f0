using Nats.Server.Clients;

namespace Nats.Server.Mqtt;

/// <summary>
/// Outbound bytes of one MQTT connection: producers (the connection's read loop and publishers'
/// threads delivering to its subscriptions) append encoded packets under a short lock into one of two
/// buffers; the write loop swaps them and writes a whole batch, so a fan-out costs a copy and no
/// allocation in steady state.
/// </summary>
/// <remarks>
/// The flow control of a client's <see cref="OutboundQueue"/>, with its numbers: a publisher whose
/// delivery takes the pending bytes past the stall threshold (half of max_pending, at most
/// <see cref="OutboundQueue.StallThresholdCap"/>) is told to stall and waits in its
/// <see cref="StallList"/> (<see cref="IDrainable"/>) until a completed write leaves the queued bytes at
/// or below half the threshold, so a subscriber that keeps reading is never cut, whatever the
/// publisher's pace. One that writes nothing for the stuck bound while a publisher waits is cut as a
/// slow consumer; max_pending stays the hard limit for publishers that cannot wait. With
/// <c>no_fast_producer_stall</c> a publisher never waits: past three quarters of max_pending this
/// subscriber misses the message instead, as a client does. The bytes sit in two growing arrays swapped
/// per write rather than pooled chunks: an MQTT PUBLISH is framed whole before it is queued.
/// </remarks>
internal sealed class MqttOutbound : IDrainable
{
    private readonly Lock _lock = new();
    private readonly AsyncSignal _signal = new();
    private readonly long _maxPending;
    private readonly long _stallThreshold;
    private readonly TimeSpan _stuckBound;
    private readonly Func<bool> _noFastProducerStall;
    private byte[] _filling = new byte[4096];
    private byte[] _spare = new byte[4096];
    private int _length;
    private long _inFlight;
    private long _written;
    private bool _closed;
    private TaskCompletionSource? _stallGate;

    /// <param name="noFastProducerStall">Read per message, so a reload of no_fast_producer_stall applies at once.</param>
    public MqttOutbound(long maxPending, TimeSpan stuckBound, Func<bool> noFastProducerStall)
    {
        _maxPending = maxPending;
        _stallThreshold = Math.Min(maxPending / 2, OutboundQueue.StallThresholdCap);
        _stuckBound = stuckBound;
        _noFastProducerStall = noFastProducerStall;
    }

    /// <summary>Raised (outside the lock) for each message dropped under no_fast_producer_stall.</summary>
    public event Action? FastProducerDrop;

    /// <summary>Raised (once, outside the lock) when pending bytes exceed max_pending, or when a waiting publisher saw no write progress for the stuck bound.</summary>
    public event Action? SlowConsumer;

    public void Enqueue(ReadOnlySpan<byte> packet) => Enqueue(packet, canStall: false, mayDrop: false);

    /// <summary>
    /// Queues one packet; true when the publisher (if it <paramref name="canStall"/>) must wait for
    /// <see cref="WaitUntilDrainedAsync"/>. <paramref name="mayDrop"/>: not a stored message's delivery,
    /// which no_fast_producer_stall never drops.
    /// </summary>
    public bool Enqueue(ReadOnlySpan<byte> packet, bool canStall, bool mayDrop)
    {
        var slow = false;
        var stall = false;
        var dropped = false;
        // A stalled client's publisher decides per message (ClientDelivery): with no_fast_producer_stall it never waits.
        var dropFast = canStall && mayDrop && _noFastProducerStall();
        lock (_lock)
        {
            if (_closed)
            {
                return false;
            }
            dropped = dropFast && _length + _inFlight + packet.Length > _maxPending / 4 * 3;
            slow = !dropped && !Reserve(packet.Length);
            if (!slow && !dropped)
            {
                packet.CopyTo(_filling.AsSpan(_length));
                _length += packet.Length;
                if (canStall && !dropFast && _length + _inFlight > _stallThreshold)
                {
                    _stallGate ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    stall = true;
                }
            }
        }
        if (dropped)
        {
            // This subscriber misses it; the publisher goes on.
            FastProducerDrop?.Invoke();
            return false;
        }
        Finish(slow);
        return stall;
    }

    public void Close()
    {
        TaskCompletionSource? gate;
        lock (_lock)
        {
            _closed = true;
            gate = _stallGate;
            _stallGate = null;
        }
        gate?.TrySetResult();
        _signal.Set();
    }

    /// <summary>
    /// A publisher's wait: until the queue is drained below half the stall threshold, or closed. When
    /// the write loop makes no progress for the stuck bound the subscriber is cut (it is not reading).
    /// </summary>
    public async ValueTask WaitUntilDrainedAsync()
    {
        while (true)
        {
            Task gate;
            long progress;
            lock (_lock)
            {
                if (_stallGate is null || _closed)
                {
                    return;
                }
                gate = _stallGate.Task;
                progress = _written;
            }
            await gate.WaitAsync(_stuckBound).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (!gate.IsCompleted && Volatile.Read(ref _written) == progress)
            {
                SlowConsumer?.Invoke();
                return;
            }
        }
    }

    /// <summary>Writes batches until closed; the final flush happens before it returns.</summary>
    public async Task RunAsync(Stream stream, CancellationToken cancellationToken)
    {
        while (true)
        {
            await _signal.WaitAsync().ConfigureAwait(false);
            byte[] batch;
            int length;
            bool closed;
            lock (_lock)
            {
                batch = _filling;
                length = _length;
                closed = _closed;
                _filling = _spare;
                _spare = batch;
                _length = 0;
                _inFlight = length;
            }
            if (length > 0)
            {
                await stream.WriteAsync(batch.AsMemory(0, length), cancellationToken).ConfigureAwait(false);
                Written(length);
            }
            if (closed)
            {
                return;
            }
        }
    }

    private void Written(int length)
    {
        TaskCompletionSource? gate = null;
        lock (_lock)
        {
            _inFlight = 0;
            _written += length;
            if (_stallGate is not null && _length <= _stallThreshold / 2)
            {
                gate = _stallGate;
                _stallGate = null;
            }
        }
        gate?.TrySetResult();
    }

    private bool Reserve(int size)
    {
        if (_length + _inFlight + size > _maxPending)
        {
            return false;
        }
        if (_length + size > _filling.Length)
        {
            var grown = new byte[Math.Max(_length + size, _filling.Length * 2)];
            _filling.AsSpan(0, _length).CopyTo(grown);
            _filling = grown;
        }
        return true;
    }

    private void Finish(bool slow)
    {
        if (slow)
        {
            SlowConsumer?.Invoke();
            return;
        }
        _signal.Set();
    }
}
