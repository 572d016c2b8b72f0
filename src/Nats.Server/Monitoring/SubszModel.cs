using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>Sublist statistics (SublistStats in sublist.go); /subsz without a list is just this object.</summary>
internal sealed class SubListStatsModel
{
    [JsonPropertyName("num_subscriptions")] public long NumSubscriptions { get; set; }
    [JsonPropertyName("num_cache")] public long NumCache { get; set; }
    [JsonPropertyName("num_inserts")] public long NumInserts { get; set; }
    [JsonPropertyName("num_removes")] public long NumRemoves { get; set; }
    [JsonPropertyName("num_matches")] public long NumMatches { get; set; }
    [JsonPropertyName("cache_hit_rate")] public double CacheHitRate { get; set; }
    [JsonPropertyName("max_fanout")] public long MaxFanout { get; set; }
    [JsonPropertyName("avg_fanout")] public double AvgFanout { get; set; }

    [JsonIgnore] internal long CacheHits { get; set; }
    [JsonIgnore] internal long TotalFanout { get; set; }
    [JsonIgnore] internal long CachedResults { get; set; }

    /// <summary>Sums another account's statistics in, recomputing the rates from their inputs (Go's SublistStats.add).</summary>
    public void Add(SubListStatsModel other)
    {
        NumSubscriptions += other.NumSubscriptions;
        NumCache += other.NumCache;
        NumInserts += other.NumInserts;
        NumRemoves += other.NumRemoves;
        NumMatches += other.NumMatches;
        CacheHits += other.CacheHits;
        MaxFanout = Math.Max(MaxFanout, other.MaxFanout);
        TotalFanout += other.TotalFanout;
        CachedResults += other.CachedResults;
        AvgFanout = TotalFanout > 0 ? (double)TotalFanout / CachedResults : 0;
        CacheHitRate = NumMatches > 0 ? (double)CacheHits / NumMatches : 0;
    }
}

/// <summary>/subsz with a subscription list (Subsz in monitor.go: the stats are embedded, so flattened here).</summary>
internal sealed class Subsz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("num_subscriptions")] public long NumSubscriptions { get; set; }
    [JsonPropertyName("num_cache")] public long NumCache { get; set; }
    [JsonPropertyName("num_inserts")] public long NumInserts { get; set; }
    [JsonPropertyName("num_removes")] public long NumRemoves { get; set; }
    [JsonPropertyName("num_matches")] public long NumMatches { get; set; }
    [JsonPropertyName("cache_hit_rate")] public double CacheHitRate { get; set; }
    [JsonPropertyName("max_fanout")] public long MaxFanout { get; set; }
    [JsonPropertyName("avg_fanout")] public double AvgFanout { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("subscriptions_list"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<SubDetail>? SubscriptionsList { get; set; }

    /// <summary>The same statistics as one object, for the HTTP answer without a list.</summary>
    [JsonIgnore] internal SubListStatsModel Stats { get; set; } = new();
}
