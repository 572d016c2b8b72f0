namespace Nats.Storage;

internal enum StorageType
{
    File,
    Memory,
}

internal enum DiscardPolicy
{
    Old,
    New,
}

/// <summary>
/// The stream limits a store enforces by itself. Zero or negative numbers mean "no limit", as in the Go
/// server's stream configuration (where -1 is the conventional spelling).
/// </summary>
internal sealed record StoreConfig
{
    public string Name { get; init; } = "";
    public long MaxMsgs { get; init; } = -1;
    public long MaxBytes { get; init; } = -1;
    public TimeSpan MaxAge { get; init; }
    public long MaxMsgsPerSubject { get; init; } = -1;
    public int MaxMsgSize { get; init; } = -1;
    public DiscardPolicy Discard { get; init; } = DiscardPolicy.Old;

    /// <summary>With <see cref="DiscardPolicy.New"/>, also refuse a message that would exceed the per-subject limit.</summary>
    public bool DiscardNewPerSubject { get; init; }

    /// <summary>The engine this configuration is for; null accepts either. UpdateConfig refuses a mismatch
    /// as Go's stores do (the storage type of a stream cannot change).</summary>
    public StorageType? Storage { get; init; }
}
