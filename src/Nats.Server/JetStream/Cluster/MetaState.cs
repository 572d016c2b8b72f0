using System.Buffers.Binary;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// The meta group's state machine: the committed meta entries (Go's op byte then JSON: assignStream 0,
/// assignConsumer 1, removeStream 2, ...), kept in order. Nothing acts on them yet; the snapshot is our own
/// framing (u32 count, then u32-prefixed entries), not Go's S2-compressed JSON.
/// </summary>
internal sealed class MetaState(MetaGroup group) : IRaftStateMachine
{
    private readonly List<byte[]> _entries = [];

    public int Count
    {
        get
        {
            lock (_entries)
            {
                return _entries.Count;
            }
        }
    }

    public void Apply(ulong index, byte[] data)
    {
        lock (_entries)
        {
            _entries.Add(data);
        }
        group.OnApplied(data, replay: false);
    }

    public byte[] CreateSnapshot()
    {
        lock (_entries)
        {
            var size = 4 + _entries.Sum(e => 4 + e.Length);
            var bytes = new byte[size];
            BinaryPrimitives.WriteUInt32LittleEndian(bytes, (uint)_entries.Count);
            var at = 4;
            foreach (var entry in _entries)
            {
                BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(at), (uint)entry.Length);
                entry.CopyTo(bytes.AsSpan(at + 4));
                at += 4 + entry.Length;
            }
            return bytes;
        }
    }

    public void Restore(byte[] data)
    {
        lock (_entries)
        {
            _entries.Clear();
            if (data.Length < 4)
            {
                return;
            }
            var count = BinaryPrimitives.ReadUInt32LittleEndian(data);
            var at = 4;
            for (var i = 0; i < count && at + 4 <= data.Length; i++)
            {
                var length = (int)BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(at));
                if (length < 0 || at + 4 + length > data.Length)
                {
                    break;
                }
                _entries.Add(data.AsSpan(at + 4, length).ToArray());
                at += 4 + length;
            }
        }
        group.ClearAssignments();
        foreach (var entry in _entries)
        {
            group.OnApplied(entry, replay: true);
        }
    }

    public void LeaderChanged(string? leader, ulong term) => group.OnLeaderChanged(leader);
}
