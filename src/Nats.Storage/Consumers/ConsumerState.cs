namespace Nats.Storage;

internal enum AckPolicy
{
    None,
    All,
    Explicit,
}

/// <summary>A consumer sequence and the stream sequence of the same delivery (Go's SequencePair).</summary>
internal readonly record struct SequencePair(ulong Consumer, ulong Stream);

/// <summary>An unacknowledged delivery: the consumer sequence it first went out with and when it was
/// last delivered (unix ns).</summary>
internal readonly record struct PendingDelivery(ulong Sequence, long Timestamp);

/// <summary>What a consumer store needs of the consumer's configuration. <see cref="Metadata"/> is kept
/// opaquely (the server's JSON consumer configuration) so a restored stream can recreate its consumers.</summary>
internal sealed record ConsumerStoreConfig
{
    public AckPolicy AckPolicy { get; init; } = AckPolicy.Explicit;

    /// <summary>Deliveries beyond this count leave the pending set (0 or less: unlimited).</summary>
    public long MaxDeliver { get; init; } = -1;

    public byte[] Metadata { get; init; } = [];
}

/// <summary>A consumer's delivery and acknowledgement state (Go's ConsumerState). Pending and Redelivered
/// are keyed by stream sequence; Redelivered holds deliveries beyond the first (count - 1).</summary>
internal sealed class ConsumerState
{
    public SequencePair Delivered { get; set; }
    public SequencePair AckFloor { get; set; }
    public Dictionary<ulong, PendingDelivery> Pending { get; set; } = [];
    public Dictionary<ulong, ulong> Redelivered { get; set; } = [];

    public ConsumerState Clone() => new()
    {
        Delivered = Delivered,
        AckFloor = AckFloor,
        Pending = new Dictionary<ulong, PendingDelivery>(Pending),
        Redelivered = new Dictionary<ulong, ulong>(Redelivered),
    };
}
