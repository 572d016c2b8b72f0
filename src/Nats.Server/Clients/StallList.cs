namespace Nats.Server.Clients;

/// <summary>
/// The subscribers one publisher filled past their stall threshold in its current read batch (Go's
/// fast-producer stall): the publisher parses no further until each has drained. Owned by the
/// publisher's read loop, so it takes no lock.
/// </summary>
/// <remarks>
/// How the stall works: a publisher whose delivery takes a subscriber's queue past the stall
/// threshold (<see cref="OutboundQueue"/>) stops parsing its read buffer, flushes, and awaits (never
/// blocking a thread) until that subscriber has written its queue down to half the threshold; then
/// it goes on, as often as needed. The publisher is so held to the pace of its slowest reading
/// subscriber, as TCP would hold it, and no queue grows towards max_pending. A subscriber that writes
/// nothing for the stuck bound (one second, or the write deadline if lower) while a publisher waits on
/// it is cut as a slow consumer, which releases every publisher waiting on it
/// (<see cref="IDrainable.WaitUntilDrainedAsync"/>: a client's <see cref="ClientDelivery"/>, or an MQTT
/// connection's outbound). With no_fast_producer_stall the message is
/// dropped for the full subscriber instead (Go 2.11).
/// Go 2.9 stalls a producer 100 ms per message (up to 1 s as the queue nears max_pending) and cuts
/// the consumer only at max_pending or after the 10 s write deadline; Go 2.11 stalls 2-5 ms, at
/// most 10 ms per read, and so can still overrun a healthy consumer. We wait for actual progress
/// instead of a fixed time: no data is lost to a reading subscriber, and a stuck one is detected
/// within one second (or the write deadline, if lower) rather than ten.
/// </remarks>
internal sealed class StallList
{
    private IDrainable[] _subscribers = new IDrainable[4];
    private int _count;

    /// <summary>True when the read loop must wait before parsing further.</summary>
    public bool MustStall => _count > 0;

    public int Count => _count;

    /// <summary>Adds a subscriber to wait for, once.</summary>
    public void Add(IDrainable subscriber)
    {
        for (var i = 0; i < _count; i++)
        {
            if (_subscribers[i] == subscriber)
            {
                return;
            }
        }
        if (_count == _subscribers.Length)
        {
            Array.Resize(ref _subscribers, _subscribers.Length * 2);
        }
        _subscribers[_count++] = subscriber;
    }

    /// <summary>Hands the subscribers to <paramref name="into"/> and empties the list: a shared internal
    /// publisher (JetStream's deliveries) passes each consumer the subscribers that consumer filled.</summary>
    public void MoveTo(List<IDrainable> into)
    {
        for (var i = 0; i < _count; i++)
        {
            if (!into.Contains(_subscribers[i]))
            {
                into.Add(_subscribers[i]);
            }
            _subscribers[i] = null!;
        }
        _count = 0;
    }

    /// <summary>Awaits every subscriber in the list, then empties it; called by the read loop after it flushed.</summary>
    public async ValueTask WaitAllAsync()
    {
        for (var i = 0; i < _count; i++)
        {
            var subscriber = _subscribers[i];
            _subscribers[i] = null!;
            await subscriber.WaitUntilDrainedAsync().ConfigureAwait(false);
        }
        _count = 0;
    }
}
