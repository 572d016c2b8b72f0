namespace Nats.Storage;

/// <summary>
/// Where a JetStream consumer keeps its state (Go's ConsumerStore). An update is applied when the call
/// returns; its <see cref="DurabilityTicket"/> completes once it is on stable storage (file engine:
/// written, then fsynced by the stream store's group commit, concurrent updates sharing one fsync).
/// Report an acknowledgement or a delivery as done only after the ticket, and a power loss cannot
/// forget it. Memory engine tickets are complete. Thread-safe.
/// </summary>
internal interface IConsumerStore : IDisposable
{
    string Name { get; }

    StorageType Type { get; }

    ConsumerStoreConfig Config { get; }

    /// <summary>The stream sequence delivery starts after (Go's SetStarting).</summary>
    DurabilityTicket SetStarting(ulong sseq);

    /// <summary>Moves the starting sequence up only (and the ack floor with it when nothing is acknowledged).</summary>
    DurabilityTicket UpdateStarting(ulong sseq);

    bool HasState();

    /// <summary>Records delivery <paramref name="dseq"/> of stream message <paramref name="sseq"/>, its
    /// <paramref name="dc"/>-th delivery, at <paramref name="ts"/> (unix ns).</summary>
    DurabilityTicket UpdateDelivered(ulong dseq, ulong sseq, ulong dc, long ts);

    /// <summary>Records an acknowledgement; throws <see cref="StoreError.MsgNotFound"/> when the message is
    /// not pending and <see cref="StoreError.NoAckPolicy"/> for an AckNone consumer.</summary>
    DurabilityTicket UpdateAcks(ulong dseq, ulong sseq);

    DurabilityTicket UpdateConfig(ConsumerStoreConfig config);

    /// <summary>Replaces the state wholesale (replication, restore); refuses an inconsistent or older one.</summary>
    DurabilityTicket Update(ConsumerState state);

    /// <summary>A copy of the current state.</summary>
    ConsumerState State();

    /// <summary>The state in the Go server's binary encoding (encodeConsumerState, version 2).</summary>
    byte[] EncodedState();

    void Stop();

    /// <summary>Stops the store and removes its state.</summary>
    void Delete();
}
