using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>The /subsz statistics as the exporter's -subz collector names them: gnatsd_subsz_&lt;json key&gt;{server_id}.</summary>
internal sealed class SubszMetrics : IMetricsSet
{
    private const string Prefix = "gnatsd_subsz_";

    private readonly Func<SubListStatsModel> _stats;
    private readonly (Gauge.Child Gauge, Func<SubListStatsModel, double> Read)[] _fields;

    public SubszMetrics(IMetricFactory factory, string serverId, Func<SubListStatsModel> stats)
    {
        _stats = stats;
        (Gauge.Child, Func<SubListStatsModel, double>) Field(string key, string help, Func<SubListStatsModel, double> read) =>
            (factory.CreateGauge(Prefix + key, help, ["server_id"]).WithLabels(serverId), read);
        _fields =
        [
            Field("num_subscriptions", "Subscriptions in every account's subject tree", s => s.NumSubscriptions),
            Field("num_cache", "Cached subject matches", s => s.NumCache),
            Field("num_inserts", "Subscriptions inserted", s => s.NumInserts),
            Field("num_removes", "Subscriptions removed", s => s.NumRemoves),
            Field("num_matches", "Subject matches performed", s => s.NumMatches),
            Field("cache_hit_rate", "Match cache hit rate (0-1)", s => s.CacheHitRate),
            Field("max_fanout", "Largest fan-out of a cached match", s => s.MaxFanout),
            Field("avg_fanout", "Average fan-out of cached matches", s => s.AvgFanout),
        ];
    }

    public void Update()
    {
        var stats = _stats();
        foreach (var (gauge, read) in _fields)
        {
            gauge.Set(read(stats));
        }
    }
}
