namespace Nats.Server.JetStream;

/// <summary>Nats-Msg-Id entries of a stream's duplicate window (Go's ddmap/ddarr), oldest first for expiry.</summary>
internal sealed class DedupWindow
{
    private readonly Dictionary<string, (ulong Seq, long Timestamp)> _entries = new(StringComparer.Ordinal);
    private readonly Queue<(string Id, long Timestamp)> _order = new();

    public int Count => _entries.Count;

    public bool TryGet(string id, long windowNanos, long nowNanos, out ulong seq)
    {
        Expire(windowNanos, nowNanos);
        if (_entries.TryGetValue(id, out var entry))
        {
            seq = entry.Seq;
            return true;
        }
        seq = 0;
        return false;
    }

    public void Add(string id, ulong seq, long timestamp)
    {
        _entries[id] = (seq, timestamp);
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
