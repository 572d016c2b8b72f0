namespace Nats.Storage;

/// <summary>
/// Where a JetStream consumer keeps its state (Go's ConsumerStore). Every update has reached stable
/// storage (file engine: written and fsynced, concurrent updates sharing one fsync) when the call returns,
/// so an acknowledgement reported to a client is never forgotten by a power loss. Thread-safe.
/// </summary>
public interface IConsumerStore : IDisposable
{
    string Name { get; }

    StorageType Type { get; }

    ConsumerStoreConfig Config { get; }

    /// <summary>The stream sequence delivery starts after (Go's SetStarting).</summary>
    void SetStarting(ulong sseq);

    /// <summary>Moves the starting sequence up only (and the ack floor with it when nothing is acknowledged).</summary>
    void UpdateStarting(ulong sseq);

    bool HasState();

    /// <summary>Records delivery <paramref name="dseq"/> of stream message <paramref name="sseq"/>, its
    /// <paramref name="dc"/>-th delivery, at <paramref name="ts"/> (unix ns).</summary>
    void UpdateDelivered(ulong dseq, ulong sseq, ulong dc, long ts);

    /// <summary>Records an acknowledgement; throws <see cref="StoreError.MsgNotFound"/> when the message is
    /// not pending and <see cref="StoreError.NoAckPolicy"/> for an AckNone consumer.</summary>
    void UpdateAcks(ulong dseq, ulong sseq);

    void UpdateConfig(ConsumerStoreConfig config);

    /// <summary>Replaces the state wholesale (replication, restore); refuses an inconsistent or older one.</summary>
    void Update(ConsumerState state);

    /// <summary>A copy of the current state.</summary>
    ConsumerState State();

    /// <summary>The state in the Go server's binary encoding (encodeConsumerState, version 2).</summary>
    byte[] EncodedState();

    void Stop();

    /// <summary>Stops the store and removes its state.</summary>
    void Delete();
}
