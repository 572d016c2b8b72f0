namespace Nats.Server.JetStream.Cluster;

/// <summary>Timers and limits of a RAFT node, in milliseconds of the caller's clock.</summary>
internal sealed record RaftOptions
{
    /// <summary>Go: heartbeats every second.</summary>
    public long HeartbeatMs { get; init; } = 1000;

    /// <summary>Go: an election timeout drawn from 4-9 s.</summary>
    public long ElectionMinMs { get; init; } = 4000;

    public long ElectionMaxMs { get; init; } = 9000;

    /// <summary>A leader that has heard from no quorum for this long steps down (Go: lost quorum after 10 s).</summary>
    public long LostQuorumMs { get; init; } = 10000;

    /// <summary>
    /// After the leader handed over to another member (a LeaderTransfer entry naming it), a member not named campaigns
    /// once this long has passed without a new leader: the named one may be unable to lead (a replica still copying
    /// messages never campaigns), and the group would otherwise wait a whole election timeout.
    /// </summary>
    public long HandOverFallbackMs { get; init; } = 1000;

    /// <summary>How long a catch-up append may go unanswered before it is sent again.</summary>
    public long CatchupRetryMs { get; init; } = 500;

    public int MaxEntriesPerAppend { get; init; } = 512;

    public int MaxBytesPerAppend { get; init; } = 1 << 20;

    /// <summary>
    /// Committed entries applied per <see cref="RaftNode.Flush"/> at most (0: all). A member replaying a long log after a
    /// restart then keeps answering appends between chunks, so it counts towards the quorum at once instead of only
    /// after the whole replay.
    /// </summary>
    public int MaxApplyPerFlush { get; init; }

    /// <summary>Applied entries after which the state machine is snapshotted and the log compacted (0: never).</summary>
    public int SnapshotAfterEntries { get; init; } = 4096;

    /// <summary>Applied bytes of entry data after which the log is compacted as well (0: no byte limit).</summary>
    public long SnapshotAfterBytes { get; init; }

    /// <summary>
    /// A compaction the entry or byte limit calls for waits until this long after the previous one (Go's minSnapDelta
    /// for streams), so a fast stream does not snapshot (and fsync its store) many times a second.
    /// </summary>
    public long SnapshotMinIntervalMs { get; init; }

    /// <summary>Compacts whatever was applied since the last snapshot after this long (Go's compactInterval; 0: never).</summary>
    public long SnapshotIntervalMs { get; init; }
}
