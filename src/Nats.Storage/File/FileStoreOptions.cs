namespace Nats.Storage.File;

public enum FileWriteMode
{
    /// <summary>Each store call hands its record to the operating system before returning (one write
    /// system call, no fsync), so a killed process never loses an acknowledged message.</summary>
    WriteThrough,

    /// <summary>Store calls only append to the block buffer; a background flush (or
    /// <see cref="IStreamStore.FlushAllPending"/>) writes batches. Faster; a killed process loses what
    /// was not flushed, so callers flush before acknowledging.</summary>
    Buffered,
}

public sealed record FileStoreOptions
{
    public required string Directory { get; init; }

    /// <summary>Block files rotate at this size (Go's default for streams is 8 MB).</summary>
    public int BlockSize { get; init; } = 8 * 1024 * 1024;

    /// <summary>How often written data is fsynced (Go's default: 2 minutes).</summary>
    public TimeSpan SyncInterval { get; init; } = TimeSpan.FromMinutes(2);

    /// <summary>Fsync after every write, before the store call returns.</summary>
    public bool SyncAlways { get; init; }

    public FileWriteMode WriteMode { get; init; } = FileWriteMode.WriteThrough;

    /// <summary>Buffered mode: longest time a record waits in memory before the background flush.</summary>
    public TimeSpan FlushDelay { get; init; } = TimeSpan.FromMilliseconds(2);

    /// <summary>Sealed blocks whose contents stay in memory for reads.</summary>
    public int MaxCachedBlocks { get; init; } = 4;

    /// <summary>A sealed block is rewritten without its removed messages once they are this share of it.</summary>
    public double CompactThreshold { get; init; } = 0.5;

    /// <summary>How far ahead of the last sequence the meta file reserves sequences.</summary>
    public ulong SequenceReserve { get; init; } = 10_000;

    public Action<string>? Warn { get; init; }

    public TimeProvider? Clock { get; init; }
}
