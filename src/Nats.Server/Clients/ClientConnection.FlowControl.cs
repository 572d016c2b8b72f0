using Microsoft.Extensions.Logging;

namespace Nats.Server.Clients;

/// <summary>
/// Flow control between a publisher and the subscribers it feeds (Go's fast-producer stall).
/// A publisher whose delivery takes a subscriber's queue past the stall threshold (OutboundQueue) stops
/// parsing its read buffer, flushes, and awaits (never blocking a thread) until that subscriber has
/// written its queue down to half the threshold; then it goes on, as often as needed. The publisher
/// is so held to the pace of its slowest reading subscriber, as TCP would hold it, and no queue grows
/// towards max_pending. A subscriber that writes nothing for <see cref="StuckBound"/> while a
/// publisher waits on it is cut as a slow consumer, which releases every publisher waiting on it.
/// With no_fast_producer_stall the message is dropped for the full subscriber instead (Go 2.11).
/// </summary>
/// <remarks>
/// Go 2.9 stalls a producer 100 ms per message (up to 1 s as the queue nears max_pending) and cuts
/// the consumer only at max_pending or after the 10 s write deadline; Go 2.11 stalls 2-5 ms, at
/// most 10 ms per read, and so can still overrun a healthy consumer. We wait for actual progress
/// instead of a fixed time: no data is lost to a reading subscriber, and a stuck one is detected
/// within one second (or the write deadline, if lower) rather than ten.
/// </remarks>
internal sealed partial class ClientConnection
{
    private static readonly TimeSpan MaxStuckTime = TimeSpan.FromSeconds(1);

    // Subscribers this publisher must wait for before it parses on (owned by its read loop).
    private ClientConnection[] _stalledOn = new ClientConnection[4];
    private int _stalledOnCount;
    private long _stalls;
    private long _fastProducerDrops;

    /// <summary>Times this client's full queue paused a publisher.</summary>
    public long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Messages dropped for this client under no_fast_producer_stall.</summary>
    public long FastProducerDrops => Interlocked.Read(ref _fastProducerDrops);

    private TimeSpan StuckBound => _options.WriteDeadline < MaxStuckTime ? _options.WriteDeadline : MaxStuckTime;

    /// <summary>True when this read loop must wait for a subscriber before parsing further.</summary>
    private bool MustStall => _stalledOnCount > 0;

    /// <summary>Only a client's own read loop (or an MQTT connection's, through its stallable internal client) can be paused; the server's internal publishers and self-delivery never are.</summary>
    private bool CanStall(ClientConnection publisher) => publisher != this && (!publisher._isInternal || publisher._stallable);

    private void AddStall(ClientConnection subscriber)
    {
        for (var i = 0; i < _stalledOnCount; i++)
        {
            if (_stalledOn[i] == subscriber)
            {
                return;
            }
        }
        if (_stalledOnCount == _stalledOn.Length)
        {
            Array.Resize(ref _stalledOn, _stalledOn.Length * 2);
        }
        _stalledOn[_stalledOnCount++] = subscriber;
    }

    /// <summary>Awaits every subscriber this publisher filled; called by the read loop after it flushed.</summary>
    private async ValueTask WaitForStalledSubscribersAsync()
    {
        for (var i = 0; i < _stalledOnCount; i++)
        {
            var subscriber = _stalledOn[i];
            _stalledOn[i] = null!;
            await subscriber.WaitUntilDrainedAsync().ConfigureAwait(false);
        }
        _stalledOnCount = 0;
    }

    /// <summary>Waits for this subscriber to drain; cuts it as a slow consumer when it writes nothing for <see cref="StuckBound"/>.</summary>
    private async ValueTask WaitUntilDrainedAsync()
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
}
