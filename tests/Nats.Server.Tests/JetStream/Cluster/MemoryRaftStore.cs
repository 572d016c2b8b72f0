using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

/// <summary>
/// A RAFT store in memory that behaves like a disk under power loss: appends and truncations live only in
/// the "page cache" until <see cref="Sync"/>, and <see cref="Crash"/> throws away whatever was not synced.
/// </summary>
internal sealed class MemoryRaftStore : IRaftStore
{
    private List<RaftEntry> _entries = [];
    private List<RaftEntry> _durable = [];

    public RaftHardState State { get; private set; } = new(0, "");

    public RaftSnapshot? Snapshot { get; private set; }

    public ulong FirstIndex => (Snapshot?.Index ?? 0) + 1;

    public ulong LastIndex => FirstIndex - 1 + (ulong)_entries.Count;

    public bool Dirty { get; private set; }

    public long Syncs { get; private set; }

    public ulong DurableIndex { get; private set; }

    public void SaveState(ulong term, string vote) => State = new RaftHardState(term, vote);

    public void SaveSnapshot(RaftSnapshot snapshot, bool keepLog)
    {
        var keep = new List<RaftEntry>();
        if (keepLog)
        {
            for (var i = snapshot.Index + 1; i <= LastIndex; i++)
            {
                keep.Add(EntryAt(i));
            }
        }
        Snapshot = snapshot;
        _entries = keep;
        // The file store rewrites the remaining log durably with the snapshot.
        _durable = [.. keep];
        Dirty = false;
        DurableIndex = LastIndex;
    }

    public ulong TermAt(ulong index)
    {
        if (index == 0)
        {
            return 0;
        }
        if (Snapshot is { } s && index == s.Index)
        {
            return s.Term;
        }
        return index < FirstIndex || index > LastIndex ? 0 : _entries[(int)(index - FirstIndex)].Term;
    }

    public RaftEntry EntryAt(ulong index) => _entries[checked((int)(index - FirstIndex))];

    public void Append(in RaftEntry entry)
    {
        _entries.Add(entry);
        Dirty = true;
    }

    public void TruncateAfter(ulong index)
    {
        if (index >= LastIndex)
        {
            return;
        }
        var keep = (int)(index < FirstIndex ? 0 : index - FirstIndex + 1);
        _entries.RemoveRange(keep, _entries.Count - keep);
        DurableIndex = Math.Min(DurableIndex, index);
        Dirty = true;
    }

    public void Sync()
    {
        if (Dirty)
        {
            _durable = [.. _entries];
            Dirty = false;
            Syncs++;
        }
        DurableIndex = LastIndex;
    }

    // The simulation stays deterministic: its "disk" syncs at once.
    public void BeginSync() => Sync();

    /// <summary>Whether <paramref name="index"/> at <paramref name="term"/> would survive a power cut now.</summary>
    public bool HoldsDurably(ulong index, ulong term)
    {
        if (Snapshot is { } s && index <= s.Index)
        {
            return true;
        }
        var at = index - FirstIndex;
        return index >= FirstIndex && at < (ulong)_durable.Count && _durable[(int)at].Term == term;
    }

    /// <summary>Power loss: the log goes back to its last synced state.</summary>
    public void Crash()
    {
        _entries = [.. _durable];
        Dirty = false;
        DurableIndex = LastIndex;
    }

    public void Dispose()
    {
    }
}
