using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;
using Nats.Storage.File;

namespace Nats.Storage.Consumers;

/// <summary>
/// A consumer's persisted state: a snapshot file (<c>state.dat</c>) plus an append-only log of the
/// operations applied since (<c>log.N</c>, N = the snapshot's generation). Every record is framed
/// <c>u32 length, payload, u32 CRC-32C</c>; replay stops at the first record that does not verify (a torn
/// tail nobody was told about) and cuts it off.
///
/// Durability is group commit: appends happen under the owner's lock and return a logical position;
/// <see cref="WaitDurable"/> fsyncs once for everything appended so far and wakes every caller at or
/// below it. A snapshot is written to a temporary file, fsynced, renamed over the old one and the
/// directory fsynced before the new, empty log starts and the old one is deleted, so any crash point
/// leaves either the old snapshot with its full log or the new snapshot.
/// </summary>
internal sealed class ConsumerLog : IDisposable
{
    private const uint SnapshotMagic = 0x3153434E; // "NCS1"

    private readonly string _dir;
    private readonly Lock _syncLock = new();
    private SafeFileHandle _log;
    private ulong _gen;
    private long _fileLength;
    private long _base;     // logical position of the current log file's first byte
    private long _written;  // logical position after the last append
    private long _synced;   // logical position known to be on stable storage

    private ConsumerLog(string dir, SafeFileHandle log, ulong gen, long fileLength)
    {
        _dir = dir;
        _log = log;
        _gen = gen;
        _fileLength = fileLength;
        _written = fileLength;
        _synced = fileLength;
    }

    public long Length => _fileLength;

    /// <summary>Opens (creating if needed) and returns the snapshot payload (or null) and the log records after it.</summary>
    public static ConsumerLog Open(string dir, out byte[]? snapshot, out List<byte[]> records)
    {
        var created = !System.IO.Directory.Exists(dir);
        System.IO.Directory.CreateDirectory(dir);
        snapshot = ReadSnapshot(Path.Combine(dir, "state.dat"), out var gen);
        foreach (var stale in System.IO.Directory.GetFiles(dir, "log.*").Where(p => p != LogPath(dir, gen)))
            System.IO.File.Delete(stale); // logs a newer snapshot already covers
        System.IO.File.Delete(Path.Combine(dir, "state.tmp"));
        var path = LogPath(dir, gen);
        var handle = System.IO.File.OpenHandle(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read);
        records = [];
        var length = RandomAccess.GetLength(handle);
        var buf = new byte[length];
        var read = 0;
        while (read < length)
        {
            var n = RandomAccess.Read(handle, buf.AsSpan(read), read);
            if (n <= 0)
                break;
            read += n;
        }
        var pos = 0;
        while (pos + 8 <= read)
        {
            var len = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(pos));
            if (len < 8 || pos + len > read
                || Crc32C.Compute(buf.AsSpan(pos, len - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(pos + len - 4)))
                break;
            records.Add(buf.AsSpan(pos + 4, len - 8).ToArray());
            pos += len;
        }
        if (pos < length)
        {
            RandomAccess.SetLength(handle, pos);
            RandomAccess.FlushToDisk(handle);
        }
        if (created || length == 0)
        {
            DirectorySync.Sync(dir);
            if (Path.GetDirectoryName(dir) is { } parent)
                DirectorySync.Sync(parent);
        }
        return new ConsumerLog(dir, handle, gen, pos);
    }

    /// <summary>Appends one record (caller holds its store lock, which fixes the order); returns the
    /// position to pass to <see cref="WaitDurable"/>.</summary>
    public long Append(ReadOnlySpan<byte> payload)
    {
        var len = payload.Length + 8;
        Span<byte> small = stackalloc byte[256];
        var rec = len <= small.Length ? small[..len] : new byte[len];
        BinaryPrimitives.WriteInt32LittleEndian(rec, len);
        payload.CopyTo(rec[4..]);
        BinaryPrimitives.WriteUInt32LittleEndian(rec[(len - 4)..], Crc32C.Compute(rec[..(len - 4)]));
        RandomAccess.Write(_log, rec, _fileLength);
        _fileLength += len;
        var end = _base + _fileLength;
        Volatile.Write(ref _written, end);
        return end;
    }

    /// <summary>Returns once everything up to <paramref name="position"/> is on stable storage. The first
    /// waiter fsyncs for everything appended so far; the others find their position covered.</summary>
    public void WaitDurable(long position)
    {
        if (position == 0 || Volatile.Read(ref _synced) >= position)
            return;
        lock (_syncLock)
        {
            if (_synced >= position)
                return;
            var target = Volatile.Read(ref _written);
            RandomAccess.FlushToDisk(_log);
            Volatile.Write(ref _synced, target);
        }
    }

    /// <summary>Replaces snapshot and log with <paramref name="payload"/> (caller holds its store lock);
    /// everything appended before is durable when this returns.</summary>
    public long WriteSnapshot(ReadOnlySpan<byte> payload)
    {
        lock (_syncLock)
        {
            var gen = _gen + 1;
            var buf = new byte[20 + payload.Length];
            BinaryPrimitives.WriteUInt32LittleEndian(buf, SnapshotMagic);
            BinaryPrimitives.WriteUInt64LittleEndian(buf.AsSpan(4), gen);
            BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(12), payload.Length);
            payload.CopyTo(buf.AsSpan(16));
            BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(buf.Length - 4), Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)));
            var tmp = Path.Combine(_dir, "state.tmp");
            using (var h = System.IO.File.OpenHandle(tmp, FileMode.Create, FileAccess.Write))
            {
                RandomAccess.Write(h, buf, 0);
                RandomAccess.FlushToDisk(h);
            }
            var newLog = System.IO.File.OpenHandle(LogPath(_dir, gen), FileMode.Create, FileAccess.ReadWrite, FileShare.Read);
            System.IO.File.Move(tmp, Path.Combine(_dir, "state.dat"), overwrite: true);
            DirectorySync.Sync(_dir);
            var oldPath = LogPath(_dir, _gen);
            _log.Dispose();
            System.IO.File.Delete(oldPath);
            _log = newLog;
            _gen = gen;
            _base += _fileLength;
            _fileLength = 0;
            _written = _base;
            Volatile.Write(ref _synced, _base);
            return _base;
        }
    }

    public void Sync()
    {
        lock (_syncLock)
        {
            RandomAccess.FlushToDisk(_log);
            _synced = _written;
        }
    }

    public void Dispose()
    {
        lock (_syncLock)
            _log.Dispose();
    }

    private static string LogPath(string dir, ulong gen) => Path.Combine(dir, $"log.{gen}");

    private static byte[]? ReadSnapshot(string path, out ulong gen)
    {
        gen = 0;
        if (!System.IO.File.Exists(path))
            return null;
        var buf = System.IO.File.ReadAllBytes(path);
        if (buf.Length < 20 || BinaryPrimitives.ReadUInt32LittleEndian(buf) != SnapshotMagic
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(12)) != buf.Length - 20
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
            throw new StoreException(StoreError.InvalidArgument, $"consumer state file {path} is damaged");
        gen = BinaryPrimitives.ReadUInt64LittleEndian(buf.AsSpan(4));
        return buf.AsSpan(16, buf.Length - 20).ToArray();
    }
}
