using System.Buffers.Binary;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// The stream state file (<c>index.db</c>, the role of Go's per-stream index): written at a clean stop,
/// after every block is synced and before the meta file claims the stop was clean, with the block list
/// and each block's totals, the per-subject totals and the sequence index as summaries. A clean restart
/// reads it and opens the block files (their lengths must match) instead of replaying every block, so
/// opening costs O(blocks + subjects + index chunks), not O(messages). It is trusted only after a clean
/// stop at the same last sequence, with its checksum verified, and is deleted (durably) at open before
/// anything can change, so an older file can never describe a newer store. Anything else (missing,
/// damaged, stale, a store with per-message TTLs, VerifyOnOpen) falls back to the full replay.
/// </summary>
internal sealed partial class FileStore
{
    private const uint StateMagic = 0x54534453; // "SDST"
    private const int StateVersion = 1;

    private string StatePath => Path.Combine(_opts.Directory, "index.db");

    /// <summary>Opened from the state file (for tests and diagnostics).</summary>
    internal bool OpenedFromState { get; private set; }

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
        if (!CanSaveState)
        {
            DeleteStateFile();
            return;
        }

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
            }
            SaveCoreState(w);
        }
        var len = (int)ms.Length;
        ms.Write(stackalloc byte[4]);
        var buf = ms.GetBuffer();
        BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(len), Crc32C.Compute(buf.AsSpan(0, len)));
        var tmp = StatePath + ".tmp";
        using (var f = _fs.Open(tmp, StoreFileMode.Create))
        {
            f.Write(buf.AsSpan(0, len + 4), 0);
            f.Sync();
        }
        _fs.Rename(tmp, StatePath);
        _fs.SyncDirectory(_opts.Directory);
    }

    private void DeleteStateFile()
    {
        if (_fs.FileExists(StatePath))
        {
            _fs.Delete(StatePath);
            _fs.SyncDirectory(_opts.Directory);
        }
    }

    /// <summary>Recovery from the state file; false (having changed nothing) when it cannot be trusted.</summary>
    private bool TryRecoverFromState(List<(string Path, int Id)> files)
    {
        if (_opts.VerifyOnOpen || !_meta.Valid || !_meta.Clean)
        {
            return false;
        }

        byte[] buf;
        try
        {
            if (!_fs.FileExists(StatePath))
            {
                return false;
            }

            using var f = _fs.Open(StatePath, StoreFileMode.Open);
            buf = f.ReadAll();
        }
        catch (IOException)
        {
            return false;
        }
        if (buf.Length < 12
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            return false;
        }

        using var r = new BinaryReader(new MemoryStream(buf, 0, buf.Length - 4, writable: false));
        if (r.ReadUInt32() != StateMagic || r.ReadInt32() != StateVersion
            || r.ReadInt32() != Slots.ChunkShift || r.ReadInt32() != files.Count)
        {
            return false;
        }

        var blocks = new List<MessageBlock>(files.Count);
        try
        {
            foreach (var (path, id) in files)
            {
                var file = _fs.Open(path, StoreFileMode.Open);
                var block = new MessageBlock(id, path, file, (int)Math.Min(file.Length, int.MaxValue)) { Sealed = true };
                blocks.Add(block);
                if (r.ReadInt32() != id || r.ReadInt32() != file.Length)
                {
                    throw new InvalidDataException("the blocks changed since the state was written");
                }

                block.LiveMsgs = r.ReadInt32();
                block.LiveBytes = r.ReadInt64();
                block.DeadBytes = r.ReadInt64();
                block.MinSeq = r.ReadUInt64();
                block.MaxSeq = r.ReadUInt64();
            }
            // The state must describe exactly the clean stop the meta file records.
            var at = r.BaseStream.Position;
            r.ReadUInt64();
            if (r.ReadUInt64() != _meta.CleanLast)
            {
                throw new InvalidDataException("the state is not from the last clean stop");
            }

            r.BaseStream.Position = at;
        }
        catch (Exception e) when (e is InvalidDataException or EndOfStreamException or IOException)
        {
            foreach (var b in blocks)
            {
                b.Dispose();
            }
            return false;
        }

        foreach (var b in blocks)
        {
            _blocks.Add(b);
            _byId[b.Id] = b;
        }
        LoadCoreState(r);
        OpenedFromState = true;
        return true;
    }
}
