using System.Security.Cryptography;
using Nats.Storage.Consumers;
using Nats.Storage.Core;

namespace Nats.Storage.Memory;

/// <summary>
/// Messages held in process memory: one array per message (header then data) referenced from its slot.
/// Loads hand out slices of that array without copying; the array is never written after the store,
/// except by an erase, which overwrites it with random bytes.
/// </summary>
internal sealed class MemoryStore : StoreCore
{
    public MemoryStore(StoreConfig config, TimeProvider? clock = null, Action<string>? warn = null)
        : base(config, clock, payloadsInIndex: true)
    {
        Warn = warn;
    }

    public override StorageType Type => StorageType.Memory;

    // Go's memStoreMsgSize: subject, header and data plus 16 bytes for sequence and timestamp.
    protected override int MessageSize(string subject, int headerLength, int dataLength)
        => subject.Length + headerLength + dataLength + 16;

    protected override void WriteMessage(ref Slot slot, ulong seq, string subject, ReadOnlySpan<byte> header,
        ReadOnlySpan<byte> data, long timestamp, long ttlExpiry)
    {
        var total = header.Length + data.Length;
        var buf = total == 0 ? [] : GC.AllocateUninitializedArray<byte>(total);
        header.CopyTo(buf);
        data.CopyTo(buf.AsSpan(header.Length));
        Slots.PayloadOf(seq) = buf;
        slot.A = header.Length;
    }

    protected override bool ReadMessage(ulong seq, in Slot slot, StoredMessage into)
    {
        var buf = Slots.PayloadOf(seq)!;
        into.Header = buf.AsMemory(0, slot.A);
        into.Data = buf.AsMemory(slot.A);
        return true;
    }

    protected override void OnRemove(ulong seq, in Slot slot, bool erase, bool bulk)
    {
        if (erase && Slots.PayloadOf(seq) is { Length: > 0 } buf)
        {
            RandomNumberGenerator.Fill(buf);
        }
    }

    protected override void OnSkip(ulong seq, ulong count, long timestamp) { }

    protected override void OnCompacted(ulong firstSeq) { }

    protected override void OnTruncated(ulong lastSeq) { }

    protected override ConsumerStoreBase OpenConsumer(string name, ConsumerStoreConfig? config)
        => new MemoryConsumerStore(name, config ?? new ConsumerStoreConfig());
}
