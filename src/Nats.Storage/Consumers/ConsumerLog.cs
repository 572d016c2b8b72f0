using System.Buffers.Binary;
using Nats.Storage.File;
using Nats.Storage.IO;

namespace Nats.Storage.Consumers;

/// <summary>
/// A consumer's persisted state: a snapshot file (<c>state.dat</c>) plus an append-only log of the
/// operations applied since (<c>log.N</c>, N = the snapshot's generation). Every record is framed
/// <c>u32 length, payload, u32 CRC-32C</c>; replay stops at the first record that does not verify (a torn
/// tail nobody was told about) and cuts it off.
///
/// Durability is the stream store's group commit: appends happen under the owner's lock and return the
/// ticket of the sync round that will cover them; one fsync completes every update of a round. Appends
/// collect in memory and reach the file in one write when the round collects them (or the buffer
/// fills): a consumer records every delivery, and a system call per delivery cost more than the
/// delivery itself. Nothing is lost that was promised: a ticket completes only after its round wrote
/// and fsynced the records, and records are written in applied order, so a crash keeps a prefix. A
/// snapshot is written to a temporary file, fsynced, renamed over the old one and the directory fsynced
/// before the new, empty log takes over and the old one is deleted, so any crash point leaves either
/// the old snapshot with its whole log or the new snapshot. All I/O goes through <see cref="IStoreFileSystem"/>.
/// </summary>
internal sealed class ConsumerLog : IDisposable
{
    private const uint SnapshotMagic = 0x3153434E; // "NCS1"

    /// <summary>Buffered records beyond this go to the file at once instead of waiting for the round.</summary>
    private const int MaxBuffered = 64 * 1024;

    private readonly IStoreFileSystem _fs;
    private readonly string _dir;
    private readonly GroupCommit _commit;
    private IStoreFile _log;
    private ulong _gen;
    private long _length;
    private byte[] _buffer = new byte[4096];
    private int _buffered;
    private bool _dirty;
    private bool _dirDirty;

    private ConsumerLog(IStoreFileSystem fs, string dir, Lock ownerLock, IStoreFile log, ulong gen, long length, bool dirDirty)
    {
        _fs = fs;
        _dir = dir;
        _log = log;
        _gen = gen;
        _length = length;
        _dirDirty = dirDirty;
        _commit = new GroupCommit(ownerLock, fs, Collect, static _ => { });
    }

    /// <summary>Bytes of the log, including records not yet written to the file.</summary>
    public long Length => _length + _buffered;

    /// <summary>Opens (creating if needed) and returns the snapshot payload (or null) and the log records
    /// after it. <paramref name="ownerLock"/> is the lock the owner holds while appending.</summary>
    public static ConsumerLog Open(IStoreFileSystem fs, string dir, Lock ownerLock, out byte[]? snapshot, out List<byte[]> records)
    {
        fs.CreateDirectory(dir);
        snapshot = ReadSnapshot(fs, Path.Combine(dir, "state.dat"), out var gen);
        var path = LogPath(dir, gen);
        foreach (var stale in fs.ListFiles(dir, "").Where(p => Path.GetFileName(p).StartsWith("log.", StringComparison.Ordinal) && p != path))
        {
            fs.Delete(stale); // a newer snapshot already covers it
        }

        fs.Delete(Path.Combine(dir, "state.tmp"));
        var created = !fs.FileExists(path);
        var log = fs.Open(path, StoreFileMode.OpenOrCreate);
        var buf = log.ReadAll();
        records = [];
        var pos = 0;
        while (pos + 8 <= buf.Length)
        {
            var len = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(pos));
            if (len < 8 || len > buf.Length - pos
                || Crc32C.Compute(buf.AsSpan(pos, len - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(pos + len - 4)))
            {
                break;
            }

            records.Add(buf.AsSpan(pos + 4, len - 8).ToArray());
            pos += len;
        }
        if (pos < buf.Length)
        {
            log.SetLength(pos);
        }
        // After a kill the log's tail may still be only in the page cache; the state rebuilt from it is
        // acted on (redeliveries, ack floors) as durable, so it is made durable first.
        log.Sync();
        return new ConsumerLog(fs, dir, ownerLock, log, gen, pos, created);
    }

    /// <summary>Appends one record (caller holds the owner lock, which fixes the order); the ticket
    /// completes when the record is on stable storage.</summary>
    public DurabilityTicket Append(ReadOnlySpan<byte> payload)
    {
        var len = payload.Length + 8;
        if (_buffered + len > _buffer.Length)
        {
            WriteBuffered();
            if (len > _buffer.Length)
            {
                _buffer = new byte[Math.Max(len, _buffer.Length * 2)];
            }
        }
        var rec = _buffer.AsSpan(_buffered, len);
        BinaryPrimitives.WriteInt32LittleEndian(rec, len);
        payload.CopyTo(rec[4..]);
        BinaryPrimitives.WriteUInt32LittleEndian(rec[(len - 4)..], Crc32C.Compute(rec[..(len - 4)]));
        _buffered += len;
        _dirty = true;
        if (_buffered >= MaxBuffered)
        {
            WriteBuffered();
        }

        return _commit.Enlist();
    }

    /// <summary>Hands buffered records to the OS (owner lock held); the buffer grows up to
    /// <see cref="MaxBuffered"/> so a busy consumer writes in large pieces.</summary>
    private void WriteBuffered()
    {
        if (_buffered == 0)
        {
            return;
        }

        _log.Write(_buffer.AsSpan(0, _buffered), _length);
        _length += _buffered;
        _buffered = 0;
        if (_buffer.Length < MaxBuffered)
        {
            _buffer = new byte[MaxBuffered];
        }
    }

    /// <summary>Replaces snapshot and log with <paramref name="payload"/> (caller holds the owner lock).
    /// Everything appended before is durable when this returns.</summary>
    public void WriteSnapshot(ReadOnlySpan<byte> payload)
    {
        var gen = _gen + 1;
        var buf = new byte[20 + payload.Length];
        BinaryPrimitives.WriteUInt32LittleEndian(buf, SnapshotMagic);
        BinaryPrimitives.WriteUInt64LittleEndian(buf.AsSpan(4), gen);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(12), payload.Length);
        payload.CopyTo(buf.AsSpan(16));
        BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(buf.Length - 4), Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)));
        var tmp = Path.Combine(_dir, "state.tmp");
        using (var f = _fs.Open(tmp, StoreFileMode.Create))
        {
            f.Write(buf, 0);
            f.Sync();
        }
        var newLog = _fs.Open(LogPath(_dir, gen), StoreFileMode.Create);
        _fs.Rename(tmp, Path.Combine(_dir, "state.dat"));
        _fs.SyncDirectory(_dir);
        var old = _log;
        _log = newLog;
        _gen = gen;
        _length = 0;
        _dirty = false;
        _buffered = 0; // the snapshot covers the records not yet written to the old log
        old.Dispose(); // a sync round holding it skips it: the snapshot already covers its records
        _fs.Delete(old.Path);
        _dirDirty = true;
    }

    /// <summary>Under the owner lock: a ticket covering every append so far.</summary>
    public DurabilityTicket Current() => _commit.Current();

    public void Dispose()
    {
        try
        {
            WriteBuffered();
        }
        catch (IOException)
        {
            // Nothing buffered was acknowledged (its round never ran); a failed store keeps what it has.
        }
        catch (ObjectDisposedException)
        {
        }
        _log.Dispose();
    }

    private void Collect(SyncBatch batch)
    {
        if (_dirty)
        {
            WriteBuffered();
            batch.Files.Add(_log);
            _dirty = false;
        }
        if (_dirDirty)
        {
            batch.Directories.Add(_dir);
            if (Path.GetDirectoryName(_dir) is { } parent)
            {
                batch.Directories.Add(parent);
            }

            _dirDirty = false;
        }
    }

    private static string LogPath(string dir, ulong gen) => Path.Combine(dir, $"log.{gen}");

    private static byte[]? ReadSnapshot(IStoreFileSystem fs, string path, out ulong gen)
    {
        gen = 0;
        if (!fs.FileExists(path))
        {
            return null;
        }

        byte[] buf;
        using (var f = fs.Open(path, StoreFileMode.Open))
        {
            buf = f.ReadAll();
        }

        if (buf.Length < 20 || BinaryPrimitives.ReadUInt32LittleEndian(buf) != SnapshotMagic
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(12)) != buf.Length - 20
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            throw new StoreException(StoreError.InvalidArgument, $"consumer state file {path} is damaged");
        }

        gen = BinaryPrimitives.ReadUInt64LittleEndian(buf.AsSpan(4));
        return buf.AsSpan(16, buf.Length - 20).ToArray();
    }
}
