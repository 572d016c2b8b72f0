namespace Nats.Server.Monitoring;

/// <summary>Per-endpoint request counts for /varz "http_req_stats" (Go counts by handler path).</summary>
internal sealed class RequestStats
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, long> _counts = new(StringComparer.Ordinal);

    public void Increment(string path)
    {
        lock (_lock)
        {
            _counts[path] = _counts.GetValueOrDefault(path) + 1;
        }
    }

    /// <summary>Sorted by path, as Go's encoder writes map keys.</summary>
    public SortedDictionary<string, long> Snapshot()
    {
        lock (_lock)
        {
            return new SortedDictionary<string, long>(_counts, StringComparer.Ordinal);
        }
    }
}
