using System.Buffers.Binary;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// The stream state file (<c>index.db</c>, the role of Go's per-stream index): the block list with each
/// block's totals and last record, the per-subject totals and the sequence index as summaries. Written
/// at a clean stop (after every block is synced) and, while the store runs, as a checkpoint after a sync
/// round made everything it describes durable (at most every <see cref="FileStoreOptions.CheckpointInterval"/>).
/// An open reads it and opens the block files instead of replaying every block, then replays only the
/// records written after it: the tail of the block that was active then and the blocks created since.
/// Opening therefore costs O(blocks + subjects + index chunks + what was written after the state),
/// after a clean stop and after a crash alike. Blocks only grow by appends; every other change to a
/// block (compaction, truncation, repair) rewrites it shorter, so a state is trusted only when every
/// block it lists still exists with the same length (the last one: at least that length) and ends, at
/// that length, with the same last record (offset and checksum), no block it does not list is older
/// than one it lists, and every record of the last listed block (the one active when it was taken, which
/// a crash may have damaged) verifies up to that length. Anything else (missing, damaged, mismatched, VerifyOnOpen, a damaged meta
/// file) falls back to the full replay, so damage costs time, never data. A store holding per-message
/// TTLs or never-expire marks (kept only in the blocks) writes no new state.
/// </summary>
internal sealed partial class FileStore
{
    private const uint StateMagic = 0x54534453; // "SDST"
    private const int StateVersion = 2;

    private string StatePath => Path.Combine(_opts.Directory, "index.db");

    // A running checkpoint is written under its own name, so a clean stop's write (index.db.tmp) never
    // shares a file with it.
    private string CheckpointTmpPath => StatePath + ".ckpt";

    /// <summary>Opened from the state file (for tests and diagnostics).</summary>
    internal bool OpenedFromState { get; private set; }

    /// <summary>Blocks (or block tails) replayed after the state file at open (for tests and diagnostics).</summary>
    internal int RecoveredTailBlocks { get; private set; }

    /// <summary>Checkpoints written while running (for tests and diagnostics).</summary>
    internal int CheckpointsWritten { get; private set; }

    /// <summary>At a clean stop: false when the state file could not be written, and then the stop is not
    /// recorded as clean either (the next open replays and verifies, as after a crash).</summary>
    private bool TryWriteStateFile()
    {
        try
        {
            WriteStateFile();
            return true;
        }
        catch (IOException e)
        {
            Warn?.Invoke($"stream state file not written: {e.Message}");
            return false;
        }
    }

    /// <summary>At a clean stop, blocks synced: writes, fsyncs and renames the state file into place.</summary>
    private void WriteStateFile()
    {
        if (!StateSavable)
        {
            DeleteStateFile();
            return;
        }

        var tmp = StatePath + ".tmp";
        WriteStateBytes(tmp, SerializeState());
        _fs.Rename(tmp, StatePath);
        _fs.SyncDirectory(_opts.Directory);
    }

    private void WriteStateBytes(string path, byte[] state)
    {
        using var f = _fs.Open(path, StoreFileMode.Create);
        f.Write(state, 0);
        f.Sync();
    }

    /// <summary>Under the lock: the state as it is now, checksummed. Every block's bytes must have been
    /// handed to the OS (the last record of each is read back).</summary>
    private byte[] SerializeState()
    {
        using var ms = new MemoryStream();
        using (var w = new BinaryWriter(ms, System.Text.Encoding.UTF8, leaveOpen: true))
        {
            w.Write(StateMagic);
            w.Write(StateVersion);
            w.Write(Slots.ChunkShift);
            w.Write(_blocks.Count);
            foreach (var b in _blocks)
            {
                w.Write(b.Id);
                w.Write(b.Length);
                w.Write(b.LiveMsgs);
                w.Write(b.LiveBytes);
                w.Write(b.DeadBytes);
                w.Write(b.MinSeq);
                w.Write(b.MaxSeq);
                w.Write(b.LastRecord);
                w.Write(TailChecksum(b));
            }
            SaveCoreState(w);
        }
        var len = (int)ms.Length;
        ms.Write(stackalloc byte[4]);
        var buf = ms.ToArray();
        BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(len), Crc32C.Compute(buf.AsSpan(0, len)));
        return buf;
    }

    /// <summary>The checksum that ends the block's last record (its last four bytes); 0 for an empty block.</summary>
    private static uint TailChecksum(MessageBlock b)
    {
        if (b.LastRecord < 0 || b.Length < RecordCodec.MinSize)
        {
            return 0;
        }

        if (b.TailChecksumAt == (b.Length, b.Generation))
        {
            return b.TailChecksum;
        }

        Span<byte> tail = stackalloc byte[4];
        if (b.TryBuffered(b.Length - 4, out var buf, out var at))
        {
            buf.AsSpan(at, 4).CopyTo(tail);
        }
        else if (b.File.Read(tail, b.Length - 4) != 4)
        {
            throw new IOException($"block {b.Id} is shorter than its recorded length");
        }

        b.TailChecksum = BinaryPrimitives.ReadUInt32LittleEndian(tail);
        b.TailChecksumAt = (b.Length, b.Generation);
        return b.TailChecksum;
    }

    private void DeleteStateFile()
    {
        if (_fs.FileExists(StatePath))
        {
            _fs.Delete(StatePath);
            _fs.SyncDirectory(_opts.Directory);
        }
    }

    /// <summary>
    /// Recovery from the state file: the number of block files (a prefix of <paramref name="files"/>) it
    /// restored and the length the last of them had when the state was taken (its records beyond that are
    /// replayed); (0, 0), having changed nothing, when it cannot be trusted.
    /// </summary>
    private (int Covered, int TailFrom) TryRecoverFromState(List<(string Path, int Id)> files)
    {
        foreach (var leftover in new[] { StatePath + ".tmp", CheckpointTmpPath })
        {
            if (_fs.FileExists(leftover))
            {
                _fs.Delete(leftover); // made durable by the open's directory sync
            }
        }

        if (!_fs.FileExists(StatePath))
        {
            return (0, 0);
        }

        var result = ReadStateFile(files);
        if (result.Covered == 0)
        {
            // Never trusted later either: the open's directory sync makes the deletion durable.
            _fs.Delete(StatePath);
        }
        return result;
    }

    private (int Covered, int TailFrom) ReadStateFile(List<(string Path, int Id)> files)
    {
        if (_opts.VerifyOnOpen || !_meta.Valid)
        {
            return (0, 0);
        }

        byte[] buf;
        try
        {
            using var f = _fs.Open(StatePath, StoreFileMode.Open);
            buf = f.ReadAll();
        }
        catch (IOException)
        {
            return (0, 0);
        }
        if (buf.Length < 16
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            return (0, 0);
        }

        using var r = new BinaryReader(new MemoryStream(buf, 0, buf.Length - 4, writable: false));
        if (r.ReadUInt32() != StateMagic || r.ReadInt32() != StateVersion || r.ReadInt32() != Slots.ChunkShift)
        {
            return (0, 0);
        }

        var count = r.ReadInt32();
        if (count <= 0 || count > files.Count)
        {
            return (0, 0);
        }

        var blocks = new List<MessageBlock>(count);
        var tailFrom = 0;
        try
        {
            for (var i = 0; i < count; i++)
            {
                var (path, id) = files[i];
                var file = _fs.Open(path, StoreFileMode.Open);
                var length = file.Length;
                var block = new MessageBlock(id, path, file, (int)Math.Min(length, int.MaxValue)) { Sealed = true };
                blocks.Add(block);
                var listedId = r.ReadInt32();
                var listedLength = r.ReadInt32();
                // Files are listed in id order, so a block created after the state has a higher id than all
                // of them; only the newest listed block (active then) may have grown since.
                if (listedId != id || (i < count - 1 ? length != listedLength : length < listedLength))
                {
                    throw new InvalidDataException($"the blocks changed since the state was written");
                }

                block.LiveMsgs = r.ReadInt32();
                block.LiveBytes = r.ReadInt64();
                block.DeadBytes = r.ReadInt64();
                block.MinSeq = r.ReadUInt64();
                block.MaxSeq = r.ReadUInt64();
                block.LastRecord = r.ReadInt32();
                var tail = r.ReadUInt32();
                if (!EndsWithRecord(block, listedLength, tail))
                {
                    throw new InvalidDataException($"block {id} no longer ends where the state says");
                }

                tailFrom = listedLength;
            }
            // The block that was active when the state was taken is the one a crash can have left damaged
            // below the state's length (a bit flip, a page the disk lost): it is read and checked whole,
            // as Go rescans its last block; the sealed ones are trusted on their last record.
            if (!RecordsVerify(blocks[^1], tailFrom))
            {
                throw new InvalidDataException($"block {blocks[^1].Id} does not verify up to where the state says");
            }
            // A clean stop records its last sequence: a state from later than that cannot describe it.
            var at = r.BaseStream.Position;
            r.ReadUInt64();
            if (_meta.Clean && r.ReadUInt64() > _meta.CleanLast)
            {
                throw new InvalidDataException("the state is newer than the last clean stop");
            }

            r.BaseStream.Position = at;
        }
        catch (Exception e) when (e is InvalidDataException or EndOfStreamException or IOException)
        {
            foreach (var b in blocks)
            {
                b.Dispose();
            }
            return (0, 0);
        }

        foreach (var b in blocks)
        {
            _blocks.Add(b);
            _byId[b.Id] = b;
        }
        LoadCoreState(r);
        OpenedFromState = true;
        return (count, tailFrom);
    }

    /// <summary>True when the block's first <paramref name="length"/> bytes are whole records that verify.</summary>
    private static bool RecordsVerify(MessageBlock block, int length)
    {
        if (length == 0)
        {
            return true;
        }

        var buf = MessageBlock.Rent(length);
        try
        {
            for (var read = 0; read < length;)
            {
                var n = block.File.Read(buf.AsSpan(read, length - read), read);
                if (n <= 0)
                {
                    return false;
                }

                read += n;
            }

            for (var off = 0; off < length;)
            {
                if (!RecordCodec.TryRead(buf.AsSpan(off, length - off), out var rec))
                {
                    return false;
                }

                off += rec.Length;
            }
            return true;
        }
        finally
        {
            MessageBlock.ReturnRented(buf);
        }
    }

    /// <summary>True when the block's record at <see cref="MessageBlock.LastRecord"/> verifies, ends exactly at
    /// <paramref name="length"/> and carries the checksum the state recorded (no record: an empty prefix).</summary>
    private static bool EndsWithRecord(MessageBlock block, int length, uint checksum)
    {
        var at = block.LastRecord;
        if (at < 0)
        {
            return length == 0;
        }

        var size = length - at;
        if (at >= length || size < RecordCodec.MinSize || size > RecordCodec.MaxRecord)
        {
            return false;
        }

        var buf = MessageBlock.Rent(size);
        try
        {
            var read = 0;
            while (read < size)
            {
                var n = block.File.Read(buf.AsSpan(read, size - read), at + read);
                if (n <= 0)
                {
                    return false;
                }

                read += n;
            }
            return RecordCodec.TryRead(buf.AsSpan(0, size), out var rec) && rec.Length == size
                && BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(size - 4)) == checksum;
        }
        finally
        {
            MessageBlock.ReturnRented(buf);
        }
    }
}
