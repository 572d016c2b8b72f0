using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>When a store call's changes reach stable storage, relative to the call's acknowledgement.</summary>
internal enum FileSyncMode
{
    /// <summary>Default. Each mutating call's <see cref="DurabilityTicket"/> completes once its bytes are
    /// fsynced; one background round fsyncs everything written since the previous round and releases
    /// all its waiters, so concurrent writers share fsyncs. No fsync under the store lock.</summary>
    GroupCommit,

    /// <summary>Go's default: acknowledge at once (tickets are complete), fsync every
    /// <see cref="FileStoreOptions.SyncInterval"/>. A power loss can lose acknowledged messages.</summary>
    Interval,

    /// <summary>Go's <c>sync_interval: always</c>: fsync inside every mutating call before it returns.</summary>
    Always,
}

internal enum FileWriteMode
{
    /// <summary>Each store call hands its record to the operating system before returning (one write
    /// system call, no fsync), so a killed process never loses an acknowledged message.</summary>
    WriteThrough,

    /// <summary>Store calls only append to the block buffer; a background flush (or
    /// <see cref="IStreamStore.FlushAllPending"/>) writes batches. Faster; a killed process loses what
    /// was not flushed, so callers flush before acknowledging.</summary>
    Buffered,

    /// <summary>Message appends (<see cref="IStreamStore.StoreMsg"/>, <see cref="IStreamStore.StoreRawMsg"/>)
    /// stay in the block buffer until <see cref="IStreamStore.FlushAllPending"/>, a sync round or the
    /// flush delay, so a burst of publishes costs one write system call; every other mutating call
    /// (removals, purges, skips) is written through. A caller that acknowledges a stored message
    /// without waiting for its durability ticket flushes first (JetStream does, once per read batch).</summary>
    BufferedMessages,
}

internal sealed record FileStoreOptions
{
    public required string Directory { get; init; }

    /// <summary>Block files rotate at this size (Go's default for streams is 8 MB).</summary>
    public int BlockSize { get; init; } = 8 * 1024 * 1024;

    public FileSyncMode SyncMode { get; init; } = FileSyncMode.GroupCommit;

    /// <summary><see cref="FileSyncMode.Interval"/>: how often written data is fsynced (Go 2.10's default
    /// for its <c>sync_interval</c>: 2 minutes; Go 2.9.10 has a fixed 60 s). Zero or less means that
    /// default, as Go's file store takes it, never "no timer".</summary>
    public TimeSpan SyncInterval { get; init; } = DefaultSyncInterval;

    internal static readonly TimeSpan DefaultSyncInterval = TimeSpan.FromMinutes(2);

    /// <summary>Every file operation goes through this (tests substitute a power-loss simulation).</summary>
    public IStoreFileSystem FileSystem { get; init; } = OsFileSystem.Instance;

    /// <summary>A consumer's operation log is folded into a new state snapshot once it reaches this size
    /// (or four times the last snapshot, whichever is larger).</summary>
    public int ConsumerLogCompactBytes { get; init; } = 4 << 20;

    public FileWriteMode WriteMode { get; init; } = FileWriteMode.WriteThrough;

    /// <summary>Buffered mode: longest time a record waits in memory before the background flush.</summary>
    public TimeSpan FlushDelay { get; init; } = TimeSpan.FromMilliseconds(2);

    /// <summary>A block cache (a sealed block's, or an idle active block's) nobody used for this long is
    /// dropped (Go's cache expiry: 5 s); zero keeps caches until the LRU bound evicts them.</summary>
    public TimeSpan CacheExpiry { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>Sealed blocks whose contents stay in memory for reads.</summary>
    public int MaxCachedBlocks { get; init; } = 4;

    /// <summary>A sealed block is rewritten without its removed messages once they are this share of it.</summary>
    public double CompactThreshold { get; init; } = 0.5;

    /// <summary>How far ahead of the last sequence the meta file reserves sequences.</summary>
    public ulong SequenceReserve { get; init; } = 10_000;

    /// <summary>After a crash, numbering resumes right after the last record found instead of above the
    /// reservation or a lost tail: for a replicated stream, whose sequences come from its RAFT log, which
    /// replays what the crash lost (a jump would make the replica skip every later entry).</summary>
    public bool ResumeAtLastStored { get; init; }

    public Action<string>? Warn { get; init; }

    /// <summary>Every damaged record found (on open, on read, or by a scrub), with its block and
    /// sequences; the total is <see cref="StreamState.Lost"/>. Called under the store lock, like
    /// <see cref="Warn"/>: hand the event off, do not call back into the store from it.</summary>
    public Action<StoreDamage>? Damaged { get; init; }

    /// <summary>Called once, under the store lock, when a write or fsync fails and the store stops
    /// acknowledging (every durability ticket fails from then on; new messages are refused until it is
    /// reopened). The text says which operation failed and why.</summary>
    public Action<string>? Failed { get; init; }

    /// <summary>Verify every record of every block when opening, even when a block's index is valid.</summary>
    public bool VerifyOnOpen { get; init; }

    /// <summary>How often sealed blocks are re-read from disk and verified (bit rot in data nobody
    /// reads); zero turns the background scrub off.</summary>
    public TimeSpan ScrubInterval { get; init; }

    public TimeProvider? Clock { get; init; }

    /// <summary>Most bytes of the sequence index kept in memory between operations; colder index chunks
    /// are evicted and rebuilt from the block index files when next touched (the newest always stays).
    /// 2 MB: 16 chunks of 4,096 sequences, enough for readers near the head and a few behind; a reader far
    /// behind rebuilds a chunk per 4,096 messages whatever the budget.</summary>
    public long MaxIndexBytes { get; init; } = 2 << 20;

    /// <summary>Write a per-message sidecar index (<c>.idx</c>, ~8 bytes a message) for every sealed block, so
    /// a full replay and an index page rebuild read it instead of the block. Off (the default since branch
    /// jsscale5; Go keeps no per-message index either) a sealed block gets a 36-byte seal summary instead
    /// (its length and message range, so a block cut short later is still found), and both walk the
    /// block's records; the stream state file still spares a restart from reading any of them. Existing
    /// indexes are used either way while they describe their block.</summary>
    public bool BlockIndexes { get; init; }

    /// <summary>Log2 of the sequences per index chunk; tests use tiny chunks to page constantly.</summary>
    public int IndexPageShift { get; init; } = 12;

    /// <summary>Least time between two stream state checkpoints taken while the store runs (so an open after
    /// a crash replays only what was written since the last one); zero: at every sync round (tests);
    /// negative: never (only a clean stop writes the state).</summary>
    public TimeSpan CheckpointInterval { get; init; } = TimeSpan.FromSeconds(1);
}
