using System.Security.Cryptography;
using System.Text;
using Nats.Storage.Core;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// Messages in append-only, checksummed block files (see <see cref="RecordCodec"/>), with an in-memory
/// index of every live message. Removals append tombstones; purges and compactions append markers;
/// blocks that become empty are deleted and blocks that are mostly removed are rewritten.
/// </summary>
internal sealed partial class FileStore : StoreCore
{
    private readonly FileStoreOptions _opts;
    private readonly IStoreFileSystem _fs;
    private readonly string _dir;
    private readonly List<MessageBlock> _blocks = [];
    private readonly Dictionary<int, MessageBlock> _byId = [];
    private readonly List<MessageBlock> _cached = [];
    private readonly HashSet<MessageBlock> _candidates = [];
    private readonly StoreMeta _meta;
    private MessageBlock _active = null!;
    private bool _recovering;
    private long _useTick;
    private MessageBlock? _lastRead;
    private readonly ReadWindows _windows = new();

    public FileStore(StoreConfig config, FileStoreOptions options)
        : base(config, options.Clock, indexShift: options.IndexPageShift)
    {
        _opts = options;
        Warn = options.Warn;
        Damaged = options.Damaged;
        _fs = options.FileSystem;
        _dir = Path.Combine(options.Directory, "msgs");
        _fs.CreateDirectory(_dir);
        _meta = new StoreMeta(_fs, Path.Combine(options.Directory, "meta.dat"));
        _commit = new GroupCommit(Sync, _fs, CollectUnsynced, OnSynced, OnSyncFailed, WriteReadyCheckpoint);
        _reserveStep = Math.Max(1, options.SequenceReserve);
        Slots.EnablePaging(this, (int)Math.Max(2, options.MaxIndexBytes / Slots.ChunkBytes));
        lock (Sync)
        {
            Recover();
            EnforceAllLimits();
            ScheduleExpiry();
            OnCommit();
            StartBackground();
            StartCheckpoints();
        }
    }

    public override StorageType Type => StorageType.File;

    /// <summary>Blocks on disk, oldest first (for tests and diagnostics).</summary>
    internal IReadOnlyList<string> BlockPaths
    {
        get
        {
            lock (Sync)
            {
                return _blocks.Select(b => b.Path).ToArray();
            }
        }
    }

    // Go's fileStoreMsgSize: 22 bytes of record header, subject, optional 4-byte header length and
    // header, data, and an 8-byte hash.
    protected override int MessageSize(string subject, int headerLength, int dataLength)
        => 22 + subject.Length + (headerLength > 0 ? 4 + headerLength : 0) + dataLength + 8;

    protected override void WriteMessage(ref Slot slot, ulong seq, string subject, ReadOnlySpan<byte> header,
        ReadOnlySpan<byte> data, long timestamp, long ttlExpiry)
    {
        var subjectBytes = Encoding.UTF8.GetByteCount(subject);
        var size = RecordCodec.Size(subjectBytes, header.Length, data.Length, ttlExpiry != 0);
        if (size > RecordCodec.MaxRecord || subjectBytes > ushort.MaxValue)
        {
            throw new StoreException(StoreError.MsgTooLarge);
        }

        // Reserved before anything is appended: if the reservation's fsync fails, sequence N was never
        // written, and the failed store refuses every later message, so N cannot be handed out twice.
        ReserveUpTo(seq);
        var block = RoomFor(size);
        var offset = block.Length;
        RecordCodec.Write(block.Reserve(size), RecordKind.Message, seq, timestamp, ttlExpiry, subject, subjectBytes, header, data);
        block.LastRecord = offset;
        block.Length += size;
        block.NoteMessage(seq, MessageSize(subject, header.Length, data.Length));
        _appendedMessage = true;
        slot.A = block.Id;
        slot.B = offset;
        ArmCacheExpiry();
    }

    private const int ColdReadsBeforeCaching = 64;
    private byte[] _readScratch = new byte[4096];
    private int _readLength;

    /// <summary>Reads one record of a sealed, uncached block into the scratch buffer (two reads at most:
    /// a page, then the rest of a longer record); null if the bytes there are not a plausible record.</summary>
    private byte[]? ReadRecord(MessageBlock block, int offset)
    {
        var max = block.Length - offset;
        var n = block.File.Read(_readScratch.AsSpan(0, Math.Min(_readScratch.Length, max)), offset);
        if (n < RecordCodec.MinSize)
        {
            return null;
        }

        var len = System.Buffers.Binary.BinaryPrimitives.ReadInt32LittleEndian(_readScratch);
        if (len < RecordCodec.MinSize || len > max || len > RecordCodec.MaxRecord)
        {
            return null;
        }

        if (len > n)
        {
            if (_readScratch.Length < len)
            {
                var grown = new byte[Math.Max(len, _readScratch.Length * 2)];
                _readScratch.AsSpan(0, n).CopyTo(grown);
                _readScratch = grown;
            }
            while (n < len)
            {
                var r = block.File.Read(_readScratch.AsSpan(n, len - n), offset + n);
                if (r <= 0)
                {
                    return null;
                }

                n += r;
            }
        }
        _readLength = len;
        return _readScratch;
    }

    private MessageBlock BlockOf(int id)
    {
        var last = _lastRead;
        if (last is not null && last.Id == id)
        {
            return last;
        }

        return _lastRead = _byId[id];
    }

    protected override bool ReadMessage(ulong seq, in Slot slot, StoredMessage into)
    {
        var block = BlockOf(slot.A);
        block.LastUse = ++_useTick;
        block.Used = true;
        block.ReadSinceLook = true;
        if (slot.B >= block.Length)
        {
            InvalidateState();
            return false;
        }

        int avail;
        if (block.TryBuffered(slot.B, out var buf, out var at))
        {
            avail = block.Length - slot.B;
        }
        else if (++block.ColdReads <= ColdReadsBeforeCaching && slot.B < block.Flushed
                 && ReadRecord(block, slot.B) is { } record)
        {
            // A cold read costs the record, not the block (the active block's written bytes too); a
            // block read this often is being scanned, through read windows from then on.
            (buf, at, avail) = (record, 0, _readLength);
        }
        else if (slot.B < block.Flushed && _windows.TryRead(block, slot.B, out buf, out at, out avail))
        {
            _windowsUsed = true;
            ArmCacheExpiry();
        }
        else
        {
            (buf, at) = (LoadCache(block), slot.B);
            avail = block.Length - slot.B;
        }
        if (!RecordCodec.TryRead(buf.AsSpan(at, avail), out var rec)
            || rec.Kind != RecordKind.Message || rec.Seq != seq)
        {
            InvalidateState(); // the caller drops the damaged message
            return false;
        }
        // Copied out: cache arrays are pooled and reused once a block leaves the cache.
        var total = rec.HeaderLength + rec.DataLength;
        buf.AsSpan(at + rec.HeaderOffset, total).CopyTo(into.Rent(total));
        into.Header = into.Buffer.AsMemory(0, rec.HeaderLength);
        into.Data = into.Buffer.AsMemory(rec.HeaderLength, rec.DataLength);
        return true;
    }

    protected override void OnRemove(ulong seq, in Slot slot, bool erase, bool bulk)
    {
        var block = BlockOf(slot.A);
        block.LiveMsgs--;
        block.LiveBytes -= slot.Size;
        block.DeadBytes += slot.Size;
        if (_recovering)
        {
            return;
        }

        if (erase)
        {
            InvalidateState();
            EraseRecord(block, slot.B, seq);
        }

        if (!bulk)
        {
            AppendControl(RecordKind.Tombstone, seq);
        }

        if (block != _active && (block.LiveMsgs == 0
            || block.LiveBytes < (block.LiveBytes + block.DeadBytes) * (1 - _opts.CompactThreshold)))
        {
            _candidates.Add(block);
        }
    }

    protected override void OnSkip(ulong seq, ulong count, long timestamp)
    {
        if (_recovering)
        {
            return;
        }

        var last = seq + count - 1;
        ReserveUpTo(last);
        AppendControl(RecordKind.Skip, last);
    }

    protected override void OnCompacted(ulong firstSeq)
    {
        if (_recovering)
        {
            return;
        }

        ReserveUpTo(firstSeq - 1);
        AppendControl(RecordKind.FirstMarker, firstSeq);
        foreach (var b in _blocks)
        {
            if (b != _active && b.LiveMsgs == 0)
            {
                _candidates.Add(b);
            }
        }
        // Deleting the emptied blocks (with its fsyncs) is left to the background pass that OnCommit
        // arms, so a purge or compact returns without waiting for the disk under the store lock.
    }

    protected override void OnTruncated(ulong lastSeq)
    {
        if (_recovering)
        {
            return;
        }

        TruncateBlocks(lastSeq);
    }

    protected override void OnStop()
    {
        StopBackground();
        ProcessCandidates();
        _active.WritePending();
        if (_active.Length > 0)
        {
            SealActive();
        }

        foreach (var b in _blocks)
        {
            b.Sync();
        }

        _fs.SyncDirectory(_dir);
        // Only after every block is durable may the meta file claim a clean stop at LastSeq. After a
        // failed fsync it never does: pages may have been lost, so the next open verifies and syncs.
        if (_failure is null && TryWriteStateFile())
        {
            _meta.Write(Math.Max(_meta.Reserved, LastSeq), LastSeq, clean: true, sync: true);
        }
        foreach (var b in _blocks)
        {
            b.Dispose();
        }

        _windows.Dispose();
        _meta.Dispose();
    }

    protected override void OnDelete()
    {
        _fs.DeleteDirectory(_opts.Directory);
    }

    /// <summary>The active block, rotated first if the record would not fit.</summary>
    private MessageBlock RoomFor(int size)
    {
        if (_active.Length > 0 && (long)_active.Length + size > _opts.BlockSize)
        {
            _active.WritePending();
            SealActive();
            _active = NewBlock();
        }
        return _active;
    }

    private void SealActive()
    {
        var b = _active;
        b.Sealed = true;
        // Not synced here (no fsync under the lock on the publish path): the next sync round syncs the
        // sealed block with the new one, before anything written into the new one is acknowledged.
        if (_opts.BlockIndexes && b.Cache is { } whole)
        {
            BlockIndexFile.Write(_fs, b.Path, whole, b.Length);
        }
        else if (_opts.BlockIndexes)
        {
            BlockIndexFile.WriteFromFile(_fs, b.Path, b.File, b.Length);
        }
        else
        {
            BlockIndexFile.WriteSummary(_fs, b.Path, b.Length, b.MinSeq, b.MaxSeq);
        }

        _dirDirty = true;
        if (b.KeepWhole)
        {
            Touch(b); // being read: stays cached as a sealed block
        }
        else
        {
            b.DropCache();
        }
    }

    private void AppendControl(RecordKind kind, ulong seq)
    {
        var block = RoomFor(RecordCodec.MinSize);
        RecordCodec.WriteControl(block.Reserve(RecordCodec.MinSize), kind, seq, LastTs);
        block.LastRecord = block.Length;
        block.Length += RecordCodec.MinSize;
        ArmCacheExpiry();
    }

    /// <summary>Rewrites a record in place as erased: same length, random content, valid checksum.</summary>
    private void EraseRecord(MessageBlock block, int offset, ulong seq)
    {
        var cache = block.Cache ?? LoadCache(block);
        if (!RecordCodec.TryRead(cache.AsSpan(offset, block.Length - offset), out var rec) || rec.Seq != seq)
        {
            return;
        }

        var bytes = new byte[rec.Length];
        var body = rec.Length - RecordCodec.MinSize;
        var random = new byte[body];
        RandomNumberGenerator.Fill(random);
        // Re-encode as a record of the same size whose payload is noise, so the file stays parseable.
        RecordCodec.Write(bytes, RecordKind.Erased, seq, rec.Timestamp, 0, "", 0, default, random);
        block.Overwrite(offset, bytes);
    }

    private MessageBlock NewBlock()
    {
        var id = _blocks.Count == 0 ? 1 : _blocks[^1].Id + 1;
        var path = Path.Combine(_dir, $"{id:D10}.blk");
        BlockIndexFile.Delete(_fs, path);
        var block = new MessageBlock(id, path, _fs.Open(path, StoreFileMode.Create), 0);
        _dirDirty = true; // a new file's directory entry is durable only once the directory is synced
        _blocks.Add(block);
        _byId[id] = block;
        return block;
    }

    private byte[] LoadCache(MessageBlock block)
    {
        block.ReadSinceLook = true;
        var cache = block.LoadCache();
        Touch(block);
        return cache;
    }

    /// <summary>Keeps at most MaxCachedBlocks sealed blocks' bytes in memory, dropping the least recently used.</summary>
    private void Touch(MessageBlock block)
    {
        block.LastUse = ++_useTick;
        if (block.Cache is null)
        {
            return;
        }

        block.Used = true;
        ArmCacheExpiry();

        if (!_cached.Contains(block))
        {
            _cached.Add(block);
        }

        while (_cached.Count > Math.Max(1, _opts.MaxCachedBlocks))
        {
            var victim = _cached.Where(b => b != _active).MinBy(b => b.LastUse);
            if (victim is null)
            {
                break;
            }

            victim.DropCache();
            _cached.Remove(victim);
        }
    }
}
