using System.Buffers.Binary;
using System.Text;
using Nats.Storage.File;
using Nats.Storage.IO;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A RAFT group's directory: <c>tav.idx</c> (term and vote), <c>snap.dat</c> (the latest snapshot) and
/// <c>wal.log</c>, a log of CRC-32C framed entries (u32 body length, u32 CRC of the body, then index, term,
/// type, data). A record that is short, fails its CRC or breaks the index sequence ends the log: it and
/// everything after it are cut off at open and reported, never served. The entries after the snapshot are
/// also kept in memory (the meta group's log is small and compacted by snapshots). Syncs run off the caller's
/// thread (<see cref="BeginSync"/>, <see cref="RaftLogSyncer"/>) so that a RAFT loop never waits for the disk.
/// </summary>
internal sealed class FileRaftStore : IRaftStore
{
    private const int RecordHeader = 8;
    private const int BodyHeader = 17;

    private readonly string _dir;
    private readonly List<RaftEntry> _entries = [];
    private readonly List<long> _offsets = [];
    private readonly RaftLogSyncer _syncer = new();
    private byte[] _scratch = new byte[256];
    private FileStream _wal;
    private Microsoft.Win32.SafeHandles.SafeFileHandle _handle;
    private RaftSnapshot? _snapshot;
    private RaftHardState _state;
    private bool _dirty;

    public FileRaftStore(string directory, Action<string>? warn = null)
    {
        _dir = directory;
        DurableDirectory.Create(directory);
        _state = ReadState();
        _snapshot = ReadSnapshot();
        _wal = new FileStream(WalPath, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read);
        _handle = _wal.SafeFileHandle;
        Recover(warn);
        // What the log holds may be in the page cache only (the process was killed): it counts once it is on disk.
        _wal.Flush(flushToDisk: true);
        _syncer.SyncedInline(LastIndex);
    }

    /// <summary>Called on another thread when a background sync round ends (see <see cref="IRaftStore.BeginSync"/>).</summary>
    public Action? Synced
    {
        get => _syncer.Synced;
        set => _syncer.Synced = value;
    }

    private string WalPath => Path.Combine(_dir, "wal.log");

    public RaftHardState State => _state;

    public RaftSnapshot? Snapshot => _snapshot;

    public ulong FirstIndex => (_snapshot?.Index ?? 0) + 1;

    public ulong LastIndex => FirstIndex - 1 + (ulong)_entries.Count;

    public bool Dirty => _dirty;

    public ulong DurableIndex => _syncer.Durable;

    public void SaveState(ulong term, string vote)
    {
        var b = new byte[8 + RaftWire.PeerIdLength + 4];
        BinaryPrimitives.WriteUInt64LittleEndian(b, term);
        Encoding.ASCII.GetBytes(vote.PadRight(RaftWire.PeerIdLength, '\0').AsSpan(0, RaftWire.PeerIdLength), b.AsSpan(8));
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(16), Crc32C.Compute(b.AsSpan(0, 16)));
        WriteDurably("tav.idx", b);
        _state = new RaftHardState(term, vote);
    }

    public void SaveSnapshot(RaftSnapshot snapshot, bool keepLog)
    {
        var b = new byte[20 + snapshot.Data.Length + 4];
        BinaryPrimitives.WriteUInt64LittleEndian(b, snapshot.Index);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8), snapshot.Term);
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(16), (uint)snapshot.Data.Length);
        snapshot.Data.CopyTo(b.AsSpan(20));
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(b.Length - 4), Crc32C.Compute(b.AsSpan(0, b.Length - 4)));
        WriteDurably("snap.dat", b);
        var keep = new List<RaftEntry>();
        if (keepLog)
        {
            for (var i = snapshot.Index + 1; i <= LastIndex; i++)
            {
                keep.Add(EntryAt(i));
            }
        }
        _snapshot = snapshot;
        RewriteLog(keep);
    }

    public ulong TermAt(ulong index)
    {
        if (index == 0)
        {
            return 0;
        }
        if (_snapshot is { } s && index == s.Index)
        {
            return s.Term;
        }
        return index < FirstIndex || index > LastIndex ? 0 : _entries[(int)(index - FirstIndex)].Term;
    }

    public RaftEntry EntryAt(ulong index) => _entries[checked((int)(index - FirstIndex))];

    public void Append(in RaftEntry entry)
    {
        var length = RecordHeader + BodyHeader + entry.Data.Length;
        if (_scratch.Length < length)
        {
            _scratch = new byte[Math.Max(length, _scratch.Length * 2)];
        }
        EncodeRecord(_scratch, LastIndex + 1, entry);
        _offsets.Add(_wal.Position);
        _wal.Write(_scratch, 0, length);
        _entries.Add(entry);
        _dirty = true;
    }

    public void TruncateAfter(ulong index)
    {
        if (index >= LastIndex)
        {
            return;
        }
        var keep = (int)(index < FirstIndex ? 0 : index - FirstIndex + 1);
        _wal.Flush();
        _wal.SetLength(_offsets[keep]);
        _wal.Position = _offsets[keep];
        _entries.RemoveRange(keep, _entries.Count - keep);
        _offsets.RemoveRange(keep, _offsets.Count - keep);
        _syncer.Truncated(LastIndex);
        _dirty = true;
    }

    public void BeginSync()
    {
        if (!_dirty)
        {
            return;
        }
        // Into the page cache here, on the loop: the round's fdatasync, begun after this, covers it.
        _wal.Flush();
        _dirty = false;
        _syncer.Request(_handle, LastIndex);
    }

    public void Sync()
    {
        _syncer.Drain();
        if (_dirty || _syncer.Durable < LastIndex)
        {
            _wal.Flush(flushToDisk: true);
            _dirty = false;
        }
        _syncer.SyncedInline(LastIndex);
    }

    public void Dispose()
    {
        try
        {
            _syncer.Drain();
        }
        catch (IOException)
        {
            // Reported by the round that failed; the file is closed regardless.
        }
        _wal.Dispose();
    }

    private static byte[] EncodeRecord(ulong index, in RaftEntry entry)
    {
        var record = new byte[RecordHeader + BodyHeader + entry.Data.Length];
        EncodeRecord(record, index, entry);
        return record;
    }

    private static void EncodeRecord(Span<byte> record, ulong index, in RaftEntry entry)
    {
        var body = record.Slice(RecordHeader, BodyHeader + entry.Data.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(body, index);
        BinaryPrimitives.WriteUInt64LittleEndian(body[8..], entry.Term);
        body[16] = (byte)entry.Type;
        entry.Data.CopyTo(body[BodyHeader..]);
        BinaryPrimitives.WriteUInt32LittleEndian(record, (uint)body.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(record[4..], Crc32C.Compute(body));
    }

    private void Recover(Action<string>? warn)
    {
        var bytes = new byte[_wal.Length];
        _wal.ReadExactly(bytes);
        var at = 0;
        var expected = FirstIndex;
        while (at < bytes.Length)
        {
            var span = bytes.AsSpan(at);
            if (span.Length < RecordHeader + BodyHeader)
            {
                break;
            }
            var length = BinaryPrimitives.ReadUInt32LittleEndian(span);
            if (length < BodyHeader || length > span.Length - RecordHeader)
            {
                break;
            }
            var body = span.Slice(RecordHeader, (int)length);
            if (Crc32C.Compute(body) != BinaryPrimitives.ReadUInt32LittleEndian(span[4..]))
            {
                break;
            }
            var index = BinaryPrimitives.ReadUInt64LittleEndian(body);
            if (_entries.Count == 0 && index < expected)
            {
                // Entries the snapshot already covers: a crash between snapshot and log rewrite leaves them.
                at += RecordHeader + (int)length;
                continue;
            }
            if (index != expected)
            {
                break;
            }
            _offsets.Add(at);
            _entries.Add(new RaftEntry(BinaryPrimitives.ReadUInt64LittleEndian(body[8..]), (RaftEntryType)body[16], body[BodyHeader..].ToArray()));
            expected++;
            at += RecordHeader + (int)length;
        }
        if (at < bytes.Length)
        {
            warn?.Invoke($"RAFT log {WalPath}: damaged or torn tail at byte {at} of {bytes.Length}, cut off after index {LastIndex}");
            _wal.SetLength(at);
            _wal.Flush(flushToDisk: true);
        }
        if (_offsets.Count > 0 && _offsets[0] != 0)
        {
            RewriteLog([.. _entries]);
            return;
        }
        _wal.Position = at;
    }

    private void RewriteLog(List<RaftEntry> keep)
    {
        // No round may be syncing the file this replaces.
        _syncer.Drain();
        var temp = Path.Combine(_dir, "wal.tmp");
        var first = FirstIndex;
        var offsets = new List<long>(keep.Count);
        using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            for (var i = 0; i < keep.Count; i++)
            {
                offsets.Add(file.Position);
                file.Write(EncodeRecord(first + (ulong)i, keep[i]));
            }
            file.Flush(flushToDisk: true);
        }
        _wal.Dispose();
        File.Move(temp, WalPath, overwrite: true);
        DurableDirectory.Sync(_dir);
        _wal = new FileStream(WalPath, FileMode.Open, FileAccess.ReadWrite, FileShare.Read);
        _handle = _wal.SafeFileHandle;
        _wal.Position = _wal.Length;
        _entries.Clear();
        _entries.AddRange(keep);
        _offsets.Clear();
        _offsets.AddRange(offsets);
        _dirty = false;
        _syncer.SyncedInline(LastIndex);
    }

    private RaftHardState ReadState()
    {
        var path = Path.Combine(_dir, "tav.idx");
        if (!File.Exists(path))
        {
            return new RaftHardState(0, "");
        }
        var b = File.ReadAllBytes(path);
        if (b.Length != 20 || Crc32C.Compute(b.AsSpan(0, 16)) != BinaryPrimitives.ReadUInt32LittleEndian(b.AsSpan(16)))
        {
            // Written by rename after fsync, so a bad file is damage, not a torn write: refusing to start is
            // safer than forgetting a vote.
            throw new InvalidDataException($"RAFT state {path} is damaged");
        }
        return new RaftHardState(BinaryPrimitives.ReadUInt64LittleEndian(b), Encoding.ASCII.GetString(b, 8, RaftWire.PeerIdLength).TrimEnd('\0'));
    }

    private RaftSnapshot? ReadSnapshot()
    {
        var path = Path.Combine(_dir, "snap.dat");
        if (!File.Exists(path))
        {
            return null;
        }
        var b = File.ReadAllBytes(path);
        if (b.Length < 24 || BinaryPrimitives.ReadUInt32LittleEndian(b.AsSpan(16)) != b.Length - 24
            || Crc32C.Compute(b.AsSpan(0, b.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(b.AsSpan(b.Length - 4)))
        {
            throw new InvalidDataException($"RAFT snapshot {path} is damaged");
        }
        return new RaftSnapshot(BinaryPrimitives.ReadUInt64LittleEndian(b), BinaryPrimitives.ReadUInt64LittleEndian(b.AsSpan(8)), b.AsSpan(20, b.Length - 24).ToArray());
    }

    private void WriteDurably(string name, byte[] content)
    {
        var temp = Path.Combine(_dir, name + ".tmp");
        using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            file.Write(content);
            file.Flush(flushToDisk: true);
        }
        File.Move(temp, Path.Combine(_dir, name), overwrite: true);
        DurableDirectory.Sync(_dir);
    }
}
