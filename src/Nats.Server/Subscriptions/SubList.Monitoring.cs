namespace Nats.Server.Subscriptions;

internal sealed partial class SubList
{
    /// <summary>
    /// Fan-out over the cached match results, as the Go sublist reports it: a queue group counts
    /// once. Walks the cache under the lock, so it is for monitoring only.
    /// </summary>
    public SubListFanout GetFanoutStats()
    {
        lock (_lock)
        {
            long total = 0;
            var max = 0;
            foreach (var result in _cache.Values)
            {
                var fanout = result.Plain.Length + result.QueueGroups.Length;
                total += fanout;
                if (fanout > max)
                {
                    max = fanout;
                }
            }
            return new SubListFanout(_cache.Count, total, max);
        }
    }
}

internal readonly record struct SubListFanout(int CachedResults, long TotalFanout, int MaxFanout);
