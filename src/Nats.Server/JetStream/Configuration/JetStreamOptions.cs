using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Configuration;

/// <summary>The server's <c>jetstream {}</c> block, <c>-js</c> and <c>-sd</c> (Go's Options.JetStream*).</summary>
public sealed class JetStreamOptions
{
    /// <summary>Go's JetStreamMaxMemory/MaxStore -1: size from the machine (75% of memory, 1 TB of disk).</summary>
    public const long Dynamic = -1;

    public bool Enabled { get; set; }

    /// <summary>store_dir; empty means Go's default, the system temp directory + "nats/jetstream".</summary>
    public string StoreDir { get; set; } = "";

    public long MaxMemory { get; set; } = Dynamic;

    public long MaxStore { get; set; } = Dynamic;

    public string Domain { get; set; } = "";

    /// <summary>
    /// sync_interval (Go 2.10). Unset (null) is our default, group commit: a PubAck is sent once the
    /// message is fsynced, concurrent publishes sharing each fsync. Set, it selects Go's policy:
    /// acknowledge when written to the OS, fsync every interval. <c>always</c> fsyncs inside every write.
    /// </summary>
    public TimeSpan? SyncInterval { get; set; }

    public bool SyncAlways { get; set; }

    /// <summary>max_outstanding_catchup: accepted for clustering, unused by a single server.</summary>
    public long MaxCatchup { get; set; }

    public string UniqueTag { get; set; } = "";

    /// <summary>limits { duplicate_window }: the ceiling for a stream's duplicate window (0 = none).</summary>
    public TimeSpan MaxDuplicateWindow { get; set; }

    /// <summary>limits { max_request_batch }, { max_ack_pending }: kept for consumers.</summary>
    public int MaxRequestBatch { get; set; }

    public int MaxAckPending { get; set; }
}

/// <summary>An account's JetStream limits (Go's JetStreamAccountLimits); -1 means unlimited. As in Go, the
/// same type is the configuration and the <c>limits</c> of the account info answer, hence its JSON names.</summary>
public sealed record JetStreamAccountLimits
{
    public static readonly JetStreamAccountLimits Unlimited = new();

    [JsonPropertyName("max_memory")] public long MaxMemory { get; init; } = -1;
    [JsonPropertyName("max_storage")] public long MaxStore { get; init; } = -1;
    [JsonPropertyName("max_streams")] public int MaxStreams { get; init; } = -1;
    [JsonPropertyName("max_consumers")] public int MaxConsumers { get; init; } = -1;
    [JsonPropertyName("max_ack_pending")] public int MaxAckPending { get; init; } = -1;
    [JsonPropertyName("memory_max_stream_bytes")] public long MemoryMaxStreamBytes { get; init; } = -1;
    [JsonPropertyName("storage_max_stream_bytes")] public long StoreMaxStreamBytes { get; init; } = -1;
    [JsonPropertyName("max_bytes_required")] public bool MaxBytesRequired { get; init; }

    /// <summary>
    /// Operator mode with tiered limits: the tier names ("R1", "R3"); these limits are the R1 tier's.
    /// Go picks the tier from the replicas as requested, so a create without num_replicas ("R0") or
    /// for a missing tier has no limits.
    /// </summary>
    [JsonIgnore] internal IReadOnlySet<string>? TierNames { get; init; }
}
