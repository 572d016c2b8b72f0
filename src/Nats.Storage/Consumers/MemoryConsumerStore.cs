namespace Nats.Storage.Consumers;

/// <summary>Consumer state held in process memory only (memory streams), under the shared rules.</summary>
internal sealed class MemoryConsumerStore(string name, ConsumerStoreConfig config) : ConsumerStoreBase(name, config)
{
    public override StorageType Type => StorageType.Memory;

    protected override long Persist(ConsumerOp op, ulong a, ulong b, ulong c, long ts) => 0;

    protected override long PersistConfig(ConsumerStoreConfig config) => 0;

    protected override long PersistState() => 0;

    protected override void WaitDurable(long position) { }
}
