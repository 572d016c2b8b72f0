namespace Nats.Storage.Consumers;

/// <summary>Consumer state held in process memory only (memory streams), under the shared rules.</summary>
internal sealed class MemoryConsumerStore(string name, ConsumerStoreConfig config) : ConsumerStoreBase(name, config)
{
    public override StorageType Type => StorageType.Memory;

    protected override DurabilityTicket Persist(ConsumerOp op, ulong a, ulong b, ulong c, long ts) => DurabilityTicket.Completed;

    protected override DurabilityTicket PersistConfig(ConsumerStoreConfig config) => DurabilityTicket.Completed;

    protected override DurabilityTicket PersistState() => DurabilityTicket.Completed;

    protected override DurabilityTicket Current() => DurabilityTicket.Completed;
}
