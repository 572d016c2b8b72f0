using System.Diagnostics;

namespace Nats.Server.JetStream.Consumers;

/// <summary>
/// When the next message of a consumer may go out: Go's <c>replay_policy: original</c> (wait the gap
/// between the stored timestamps of consecutive deliveries until the consumer has caught up with the
/// stream's last sequence at start) and <c>rate_limit_bps</c> (golang.org/x/time/rate token bucket:
/// bps/8 bytes per second, a burst of the stream's max_msg_size or the max payload, starting full).
/// A message that must wait is held, not dropped: the consumer puts it back (it comes out first on
/// the next pass) and returns the wait; asking again for the same message only waits out the rest,
/// as its due time and tokens were reserved once. Used under the consumer's lock; allocates nothing.
/// </summary>
internal sealed class DeliveryPacer
{
    private const long ReplayThresholdNanos = 1_000_000; // Go ignores gaps up to a millisecond.
    private static readonly double NanosPerTick = 1e9 / Stopwatch.Frequency;

    private bool _replay;
    private ulong _replayUntil;
    private long _lastTimestamp;
    private double _bytesPerNano;
    private double _burst;
    private double _tokens;
    private long _lastRefill;
    private ulong _heldSeq;
    private ulong _heldDc;
    private long _heldDue;

    private bool Active => _replay || _bytesPerNano > 0;

    /// <summary>Whether <see cref="DelayMillis"/> can answer anything but 0 (the common case costs one check per message).</summary>
    public bool Engaged => _heldSeq != 0 || Active;

    /// <summary>Go's setRateLimit and the replay flag of loopAndGatherMsgs; <paramref name="lastSeq"/> is the stream's last sequence when delivery starts.</summary>
    public void Start(ConsumerConfig config, ulong lastSeq, long burst)
    {
        _replay = config.ReplayPolicy == ReplayPolicy.Original;
        _replayUntil = lastSeq;
        _lastTimestamp = 0;
        SetRate(config.RateLimit, burst);
    }

    /// <summary>A config update may change rate_limit_bps (the replay policy cannot change).</summary>
    public void SetRate(ulong bitsPerSecond, long burst)
    {
        if (bitsPerSecond == 0)
        {
            _bytesPerNano = 0;
            return;
        }
        _bytesPerNano = Math.Max(1, bitsPerSecond / 8) / 1e9;
        _burst = Math.Max(1, burst);
        _tokens = _burst;
        _lastRefill = Now();
    }

    /// <summary>The delivery loop found nothing more to send: once past the start's last sequence, replay ends (Go's waitForMsgs).</summary>
    public void Idle(ulong nextSeq)
    {
        if (_replay && nextSeq > _replayUntil)
        {
            _replay = false;
        }
    }

    /// <summary>Milliseconds to wait before the message (<paramref name="seq"/>, delivery count <paramref name="dc"/>,
    /// stored at <paramref name="timestamp"/> unix ns, <paramref name="size"/> bytes as Go counts them) may go out; 0 = now.
    /// A non-zero answer holds the message and reserves its tokens, so asking again for it only waits out the rest.</summary>
    public long DelayMillis(ulong seq, ulong dc, long timestamp, int size)
    {
        if (_heldSeq != 0)
        {
            if (_heldSeq == seq && _heldDc == dc)
            {
                var left = _heldDue - Now();
                if (left > 0)
                {
                    return ToMillis(left);
                }
                _heldSeq = 0;
                return 0;
            }
            _heldSeq = 0;
        }
        if (!Active)
        {
            return 0;
        }
        var now = Now();
        var due = now;
        if (_replay)
        {
            var gap = timestamp - _lastTimestamp;
            if (_lastTimestamp > 0 && gap > ReplayThresholdNanos)
            {
                due += gap;
            }
            _lastTimestamp = timestamp;
        }
        if (_bytesPerNano > 0)
        {
            due = Reserve(due, size);
        }
        if (due <= now)
        {
            return 0;
        }
        _heldSeq = seq;
        _heldDc = dc;
        _heldDue = due;
        return ToMillis(due - now);
    }

    /// <summary>x/time/rate's ReserveN at <paramref name="at"/>: refill, take <paramref name="size"/> tokens (going into debt), and say when the debt is paid.</summary>
    private long Reserve(long at, int size)
    {
        if (at > _lastRefill)
        {
            _tokens = Math.Min(_burst, _tokens + (at - _lastRefill) * _bytesPerNano);
            _lastRefill = at;
        }
        _tokens -= size;
        return _tokens >= 0 ? at : _lastRefill + (long)Math.Ceiling(-_tokens / _bytesPerNano);
    }

    private static long Now() => (long)(Stopwatch.GetTimestamp() * NanosPerTick);

    private static long ToMillis(long nanos) => Math.Max(1, (nanos + 999_999) / 1_000_000);
}
