using Nats.Storage.Core;
using Nats.Storage.IO;

namespace Nats.Storage.File;

internal sealed partial class FileStore
{
    /// <summary>Deletes sealed blocks with no live messages and rewrites those mostly removed.</summary>
    private void ProcessCandidates()
    {
        if (_candidates.Count == 0)
        {
            return;
        }

        var list = _candidates.Where(b => b != _active && _byId.ContainsKey(b.Id)).OrderBy(b => b.Id).ToArray();
        _candidates.Clear();
        var wroteMarkers = false;
        foreach (var block in list)
        {
            var total = block.MinSeq == 0 ? 0 : TotalMessageBytes(block);
            var emptyish = block.LiveMsgs == 0;
            var sparse = total > 0 && block.LiveBytes < total * (1 - _opts.CompactThreshold);
            if (!emptyish && !sparse)
            {
                continue;
            }

            if (block.Length == 0)
            {
                RemoveBlock(block); // nothing was ever written here
                continue;
            }
            if (!wroteMarkers)
            {
                // Records the block may hold that still matter are re-stated in the active block first,
                // so a crash at any point leaves a replayable set of files. A store that never held or
                // purged anything has first sequence 0, which a marker would turn into 1.
                if (FirstSeq != 0)
                {
                    AppendControl(RecordKind.FirstMarker, MsgCount == 0 ? LastSeq + 1 : FirstSeq);
                }

                if (LastSeq != 0)
                {
                    AppendControl(RecordKind.Skip, LastSeq);
                }

                wroteMarkers = true;
            }
            CarryTombstones(block);
            // The restated records must be durable before the block that held them can disappear,
            // or a crash could bring back a removed message. (Background path: fsync under the lock.)
            // Restating can rotate the active block, so every block written since the last sync is synced.
            SyncWrittenBlocks();
            if (emptyish)
            {
                RemoveBlock(block);
            }
            else
            {
                RewriteBlock(block, KeepForCompaction);
            }
        }
        if (_dirDirty)
        {
            _fs.SyncDirectory(_dir); // the deletions
            _dirDirty = false;
        }
    }

    /// <summary>Under the lock (background path): every written block and the directory, now.</summary>
    private void SyncWrittenBlocks()
    {
        _active.WritePending();
        foreach (var b in _blocks)
        {
            b.Sync();
        }

        if (_dirDirty)
        {
            _fs.SyncDirectory(_dir);
            _dirDirty = false;
        }
    }

    private static long TotalMessageBytes(MessageBlock block) => block.LiveBytes + block.DeadBytes;

    /// <summary>Tombstones in <paramref name="block"/> for messages that may still be in an older block.</summary>
    private void CarryTombstones(MessageBlock block)
    {
        var oldest = _blocks[0] == block ? (_blocks.Count > 1 ? _blocks[1] : null) : _blocks[0];
        var floor = oldest?.MinSeq ?? ulong.MaxValue;
        var cache = block.Cache ?? LoadCache(block);
        // Collected first: appending can rotate the active block, and the cache eviction that follows
        // may hand this block's cache array to the new block while we are still reading it.
        List<ulong>? carry = null;
        for (var off = 0; off < block.Length;)
        {
            if (!RecordCodec.TryRead(cache.AsSpan(off, block.Length - off), out var rec))
            {
                off = NextValidRecord(cache, off + 1, block.Length);
                continue;
            }
            if (rec.Kind == RecordKind.Tombstone && NeedsTombstone(rec.Seq, block, floor))
            {
                (carry ??= []).Add(rec.Seq);
            }

            off += rec.Length;
        }
        if (carry is null)
        {
            return;
        }

        foreach (var seq in carry)
        {
            AppendControl(RecordKind.Tombstone, seq);
        }
    }

    private bool NeedsTombstone(ulong seq, MessageBlock holder, ulong floor)
        => seq >= FirstSeq && seq >= floor && (holder.MinSeq == 0 || seq < holder.MinSeq)
           && !(Slots.Contains(seq) && Slots[seq].HasMessage);

    private bool KeepForCompaction(MessageBlock block, in RecordHeader rec) => rec.Kind switch
    {
        RecordKind.Message => Slots.Contains(rec.Seq) && Slots[rec.Seq].HasMessage && Slots[rec.Seq].A == block.Id,
        _ => false, // tombstones were carried forward; markers were re-stated
    };

    private delegate bool KeepRecord(MessageBlock block, in RecordHeader rec);

    /// <summary>Writes a block anew with the records <paramref name="keep"/> accepts (via a temporary
    /// file and a rename, so a crash leaves the old or the new content), fixing live slots' offsets.</summary>
    private void RewriteBlock(MessageBlock block, KeepRecord keep)
    {
        block.WritePending();
        var cache = block.Cache ?? block.LoadCache();
        var output = MessageBlock.Rent(block.Length);
        var outLen = 0;
        long liveBytes = 0;
        var live = 0;
        var lastKept = -1;
        ulong keptFirst = 0, keptLast = 0;
        for (var off = 0; off < block.Length;)
        {
            if (!RecordCodec.TryRead(cache.AsSpan(off, block.Length - off), out var rec))
            {
                off = NextValidRecord(cache, off + 1, block.Length);
                continue;
            }
            if (keep(block, rec))
            {
                cache.AsSpan(off, rec.Length).CopyTo(output.AsSpan(outLen));
                if (rec.Kind == RecordKind.Message)
                {
                    (keptFirst, keptLast) = (keptFirst == 0 ? rec.Seq : keptFirst, rec.Seq);
                }
                if (rec.Kind == RecordKind.Message && Slots.Contains(rec.Seq))
                {
                    ref var slot = ref Slots[rec.Seq];
                    if (slot.HasMessage && slot.A == block.Id)
                    {
                        slot.B = outLen;
                        live++;
                        liveBytes += slot.Size;
                    }
                }
                lastKept = outLen;
                outLen += rec.Length;
            }
            off += rec.Length;
        }
        // New content durable first, then the rename and the directory, so a crash leaves either the
        // old block or the complete new one; the stale index goes first (it would not match anyway).
        BlockIndexFile.Delete(_fs, block.Path);
        var tmp = block.Path + ".tmp";
        using (var f = _fs.Open(tmp, StoreFileMode.Create))
        {
            f.Write(output.AsSpan(0, outLen), 0);
            f.Sync();
        }
        _fs.Rename(tmp, block.Path);
        _fs.SyncDirectory(_dir);
        block.Reopen(_fs.Open(block.Path, StoreFileMode.Open), output, outLen);
        block.LastRecord = lastKept;
        ForgetPageIndex(block);
        block.LiveMsgs = live;
        block.LiveBytes = liveBytes;
        block.DeadBytes = 0;
        if (block.Sealed && outLen > 0)
        {
            if (_opts.BlockIndexes)
            {
                BlockIndexFile.Write(_fs, block.Path, output, outLen);
            }
            else
            {
                BlockIndexFile.WriteSummary(_fs, block.Path, outLen, keptFirst, keptLast);
            }

            _dirDirty = true;
        }
        Touch(block);
    }

    private void RemoveBlock(MessageBlock block)
    {
        if (_lastRead == block)
        {
            _lastRead = null;
        }

        ForgetPageIndex(block);
        _blocks.Remove(block);
        _byId.Remove(block.Id);
        _cached.Remove(block);
        block.Dispose();
        BlockIndexFile.Delete(_fs, block.Path);
        _fs.Delete(block.Path);
        _dirDirty = true;
    }

    /// <summary>Physically removes every record above <paramref name="lastSeq"/> and records the new last sequence.</summary>
    private void TruncateBlocks(ulong lastSeq)
    {
        _active.WritePending();
        foreach (var block in _blocks.ToArray())
        {
            if (block.MaxSeq <= lastSeq && !HasControlAbove(block, lastSeq))
            {
                continue;
            }

            RewriteBlock(block, (MessageBlock _, in RecordHeader rec) => rec.Kind == RecordKind.FirstMarker ? rec.Seq <= lastSeq + 1 : rec.Seq <= lastSeq);
            if (block.MaxSeq > lastSeq)
            {
                block.MaxSeq = lastSeq;
            }
        }
        AppendControl(RecordKind.Skip, lastSeq);
        if (FirstSeq != 0)
        {
            AppendControl(RecordKind.FirstMarker, MsgCount == 0 ? LastSeq + 1 : FirstSeq);
        }

        foreach (var b in _blocks)
        {
            if (b != _active && b.LiveMsgs == 0)
            {
                _candidates.Add(b);
            }
        }
    }

    private bool HasControlAbove(MessageBlock block, ulong seq)
    {
        var cache = block.Cache ?? LoadCache(block);
        for (var off = 0; off < block.Length;)
        {
            if (!RecordCodec.TryRead(cache.AsSpan(off, block.Length - off), out var rec))
            {
                return true;
            }

            if (rec.Seq > seq)
            {
                return true;
            }

            off += rec.Length;
        }
        return false;
    }
}
