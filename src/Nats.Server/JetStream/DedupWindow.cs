using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>Nats-Msg-Id entries of a stream's duplicate window (Go's ddmap/ddarr), oldest first for expiry.
/// Each entry keeps the original's durability ticket: a duplicate's PubAck claims the original is stored,
/// so it may only be sent once the original is durable.</summary>
internal sealed class DedupWindow
{
    private readonly Dictionary<string, (ulong Seq, long Timestamp, DurabilityTicket Durable)> _entries = new(StringComparer.Ordinal);
    private readonly Queue<(string Id, long Timestamp)> _order = new();

    public int Count => _entries.Count;

    public bool TryGet(string id, long windowNanos, long nowNanos, out ulong seq, out DurabilityTicket durable)
    {
        Expire(windowNanos, nowNanos);
        if (_entries.TryGetValue(id, out var entry))
        {
            seq = entry.Seq;
            durable = entry.Durable;
            return true;
        }
        seq = 0;
        durable = default;
        return false;
    }

    /// <param name="durable">Completes when the message <paramref name="seq"/> is on stable storage.</param>
    public void Add(string id, ulong seq, long timestamp, DurabilityTicket durable = default)
    {
        _entries[id] = (seq, timestamp, durable);
        _order.Enqueue((id, timestamp));
    }

    public void Clear()
    {
        _entries.Clear();
        _order.Clear();
    }

    private void Expire(long windowNanos, long nowNanos)
    {
        var floor = nowNanos - windowNanos;
        while (_order.TryPeek(out var oldest) && oldest.Timestamp < floor)
        {
            _order.Dequeue();
            if (_entries.TryGetValue(oldest.Id, out var entry) && entry.Timestamp == oldest.Timestamp)
            {
                _entries.Remove(oldest.Id);
            }
        }
    }
}
