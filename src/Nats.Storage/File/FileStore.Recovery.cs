using Nats.Storage.Core;
using Nats.Storage.IO;

namespace Nats.Storage.File;

internal sealed partial class FileStore
{
    /// <summary>
    /// Rebuilds the index from the block files: from a block's sidecar index when it is valid, otherwise
    /// by reading and verifying every record. Damaged bytes are skipped up to the next record that
    /// verifies, reported, counted as lost and cut out of the block, and the store resumes numbering
    /// above every sequence it may ever have handed out.
    /// </summary>
    private void Recover()
    {
        _recovering = true;
        var damaged = false;
        var files = _fs.ListFiles(_dir, ".blk")
            .Select(p => (Path: p, Id: int.TryParse(Path.GetFileNameWithoutExtension(p), out var id) ? id : -1))
            .Where(f => f.Id > 0)
            .OrderBy(f => f.Id)
            .ToList();
        // The state file covers a prefix of the blocks; only what was written after it is replayed (all
        // of the blocks when there is no usable state file).
        var (covered, tailFrom) = TryRecoverFromState(files);
        var durablePrefix = covered;
        for (var i = covered == 0 ? 0 : covered - 1; i < files.Count; i++)
        {
            var (path, id) = files[i];
            MessageBlock block;
            var from = 0;
            if (i < covered)
            {
                block = _blocks[i];
                if (block.Length == tailFrom)
                {
                    continue;
                }

                from = tailFrom;
                durablePrefix = covered - 1;
            }
            else
            {
                var file = _fs.Open(path, StoreFileMode.Open);
                var length = file.Length;
                if (length > int.MaxValue)
                {
                    throw new IOException($"block {path} is larger than a block can be");
                }

                block = new MessageBlock(id, path, file, (int)length) { Sealed = true };
                _blocks.Add(block);
                _byId[id] = block;
            }
            RecoveredTailBlocks += covered > 0 ? 1 : 0;
            damaged |= RecoverBlock(block, from);
            Touch(block);
            Slots.Trim(); // between blocks no slot reference is held
        }

        var target = LastSeq;
        if (_meta.Valid && _meta.Clean && _meta.CleanLast > LastSeq)
        {
            // The store was stopped cleanly at a higher sequence: the tail was lost afterwards.
            damaged = true;
            ReportLostTail(LastSeq + 1, _meta.CleanLast);
            target = _meta.CleanLast;
        }
        // After a crash (no clean stop) sequences up to the durable reservation may have been handed out
        // even if no record of them survived (a tail cut exactly at a record boundary looks like writes
        // that never happened), so numbering resumes above it.
        if ((damaged || !_meta.Clean) && _meta.Valid)
        {
            target = Math.Max(target, _meta.Reserved);
        }

        if (_meta.Existed && !_meta.Valid)
        {
            Warn?.Invoke("stream meta file is damaged; skipping ahead so no sequence can be reused");
            target = Math.Max(target, LastSeq + MaxReserveStep);
        }

        if (_opts.ResumeAtLastStored)
        {
            target = LastSeq;
        }

        _recovering = false;
        _active = NewBlock();
        if (target > LastSeq)
        {
            SkipRange(LastSeq + 1, target - LastSeq, LastTs);
        }

        if (!_meta.Clean || damaged)
        {
            // After a kill or a crash the recovered bytes may still sit only in the page cache: they are
            // made durable before anything that depends on them (a duplicate's PubAck, a redelivery) is
            // answered. A clean stop synced every block itself.
            // Blocks the state file covers unchanged were durable before it was written.
            for (var i = durablePrefix; i < _blocks.Count; i++)
            {
                if (_blocks[i] != _active)
                {
                    _blocks[i].File.Sync();
                }
            }
        }

        // A state file that was used stays: it still describes a prefix of the store's history, so the
        // next open after a crash replays only what was written after it (see FileStore.StateFile.cs).
        _meta.Write(LastSeq + _opts.SequenceReserve, LastSeq, clean: false, sync: true);

        _durableReserved = _meta.Reserved;
        _fs.SyncDirectory(_opts.Directory);
        _fs.SyncDirectory(_dir);
        _dirDirty = false;
        foreach (var b in _blocks)
        {
            if (b != _active && b.LiveMsgs == 0)
            {
                _candidates.Add(b);
            }
        }
    }

    /// <summary>Replays one block from <paramref name="from"/> (0: from its index when that is valid, or
    /// by reading every record; above 0: the records written after a stream state was taken); true when
    /// damage was found (reported, counted and cut out).</summary>
    private bool RecoverBlock(MessageBlock block, int from)
    {
        var (path, id, length) = (block.Path, block.Id, block.Length);
        // VerifyOnOpen: read and check every record instead of trusting the index.
        if (from == 0 && !_opts.VerifyOnOpen
            && BlockIndexFile.TryReplay(_fs, path, length, (int off, in RecordHeader rec, ReadOnlySpan<byte> subj) => Replay(block, off, rec, subj)))
        {
            return false;
        }

        var scanDamaged = ScanBlock(block, from);
        // A sealed block cut short exactly at a record boundary scans clean; its index knows better.
        ulong runFirst = 0, runLast = 0, runBytes = 0;
        foreach (var (seq, len) in BlockIndexFile.MessagesBeyond(_fs, path, length, block.MaxSeq))
        {
            if (IsKnownLost(seq) || (Slots.Contains(seq) && Slots[seq].HasMessage))
            {
                continue;
            }

            scanDamaged = true;
            if (runFirst != 0 && seq != runLast + 1)
            {
                ReportMissingFromBlock(id, runFirst, runLast, runBytes);
                runFirst = 0;
            }
            if (runFirst == 0)
            {
                (runFirst, runBytes) = (seq, 0);
            }
            runLast = seq;
            runBytes += (ulong)len;
        }
        if (runFirst != 0)
        {
            ReportMissingFromBlock(id, runFirst, runLast, runBytes);
        }
        if (scanDamaged)
        {
            RepairBlock(block);
        }
        else if (block.Length > 0 && _opts.BlockIndexes)
        {
            BlockIndexFile.Write(_fs, path, block.Cache!, block.Length);
        }
        else if (block.Length > 0 && !BlockIndexFile.Describes(_fs, path, block.Length))
        {
            // A block recovered after a crash is sealed now (a new process never appends to it).
            BlockIndexFile.WriteSummary(_fs, path, block.Length, block.MinSeq, block.MaxSeq);
        }
        return scanDamaged;
    }

    /// <summary>Reads every record of a block from <paramref name="from"/>; true when anything had to be dropped.</summary>
    private bool ScanBlock(MessageBlock block, int from = 0)
    {
        var cache = block.LoadCache();
        var len = block.Length;
        var damaged = false;
        var off = from;
        while (off < len)
        {
            if (RecordCodec.TryRead(cache.AsSpan(off, len - off), out var rec))
            {
                if (rec.Kind == RecordKind.Message && rec.Seq <= LastSeq && LastSeq != 0)
                {
                    block.LastRecord = off;
                    damaged = true;
                    RecordLost(0, (ulong)rec.Length, $"block {block.Id}: record at offset {off} has out-of-order sequence {rec.Seq}; dropped", block.Id);
                }
                else
                {
                    Replay(block, off, rec, cache.AsSpan(off + rec.SubjectOffset, rec.SubjectLength));
                }
                off += rec.Length;
                continue;
            }
            damaged = true;
            var next = NextValidRecord(cache, off + 1, len);
            // Message records sit in sequence order, so the sequences between the last good record and
            // the next one are exactly what the damaged bytes held (header fields inside them cannot
            // be trusted). Without a next record the count is unknown here.
            ulong nextSeq = 0;
            if (next < len && RecordCodec.TryRead(cache.AsSpan(next, len - next), out var after) && after.Kind == RecordKind.Message)
            {
                nextSeq = after.Seq;
            }

            var what = next == len && IsZero(cache.AsSpan(off, len - off)) ? "zeroed or torn" : "damaged";
            if (nextSeq <= LastSeq + 1)
            {
                RecordLost(0, (ulong)(next - off), $"block {block.Id}: {next - off} {what} bytes at offset {off} dropped (after sequence {LastSeq})", block.Id);
            }
            else
            {
                var (first, last) = (LastSeq + 1, nextSeq - 1);
                RecordLostRange(first, last, (ulong)(next - off),
                    first == last
                        ? $"block {block.Id}: message {first} dropped ({next - off} {what} bytes at offset {off})"
                        : $"block {block.Id}: messages {first}-{last} dropped ({last - first + 1} messages, {next - off} {what} bytes at offset {off})",
                    block.Id);
            }
            off = next;
        }
        return damaged;
    }

    private void ReportMissingFromBlock(int block, ulong first, ulong last, ulong bytes)
        => RecordLostRange(first, last, bytes, first == last
            ? $"block {block}: message {first} is missing (block is shorter than when it was sealed)"
            : $"block {block}: messages {first}-{last} are missing ({last - first + 1} messages; block is shorter than when it was sealed)", block);

    /// <summary>Reports <paramref name="first"/>..<paramref name="last"/> lost from the end of the
    /// stream, skipping runs already reported, as one line per run.</summary>
    private void ReportLostTail(ulong first, ulong last)
    {
        var s = first;
        while (s <= last)
        {
            var known = KnownLostUpTo(s);
            if (known != 0)
            {
                s = known + 1;
                continue;
            }
            var end = s;
            while (end < last && !IsKnownLost(end + 1))
            {
                end++;
            }

            RecordLostRange(s, end, 0, s == end
                ? $"message {s} is missing from the end of the stream"
                : $"messages {s}-{end} are missing from the end of the stream ({end - s + 1} messages)");
            s = end + 1;
        }
    }

    internal static int NextValidRecord(byte[] cache, int from, int len)
    {
        for (var p = from; p + RecordCodec.MinSize <= len; p++)
        {
            if (RecordCodec.TryRead(cache.AsSpan(p, len - p), out _))
            {
                return p;
            }
        }
        return len;
    }

    private static bool IsZero(ReadOnlySpan<byte> span) => !span.ContainsAnyExcept((byte)0);

    private void Replay(MessageBlock block, int offset, in RecordHeader rec, ReadOnlySpan<byte> subject)
    {
        block.LastRecord = Math.Max(block.LastRecord, offset);
        switch (rec.Kind)
        {
            case RecordKind.Message:
                {
                    if (rec.Seq <= LastSeq && LastSeq != 0)
                    {
                        return; // stale index entry; the scan path reports these
                    }

                    var info = Subjects.GetOrAdd(subject);
                    var size = MessageSize(info.Subject, rec.HeaderLength, rec.DataLength);
                    ref var slot = ref RestoreSlot(rec.Seq, info, rec.Timestamp, size);
                    slot.A = block.Id;
                    slot.B = offset;
                    block.NoteMessage(rec.Seq, size);
                    if (rec.TtlExpiry > 0)
                    {
                        TrackTtl(rec.Seq, rec.TtlExpiry);
                    }
                    else if (rec.TtlExpiry < 0)
                    {
                        MarkNeverExpires(rec.Seq);
                    }

                    break;
                }
            case RecordKind.Tombstone:
                if (Slots.Contains(rec.Seq) && Slots[rec.Seq].HasMessage)
                {
                    RemoveSlot(rec.Seq, erase: false, bulk: true);
                }

                break;
            case RecordKind.Skip:
                // A skip record carries the store's last time when it was written; restating it keeps
                // the recovered last time identical to the one the store had (truncate can lower it).
                if (rec.Seq > LastSeq)
                {
                    SkipRange(LastSeq + 1, rec.Seq - LastSeq, rec.Timestamp);
                }
                else if (rec.Seq == LastSeq)
                {
                    LastTs = rec.Timestamp;
                }

                break;
            case RecordKind.Erased:
                if (rec.Seq > LastSeq)
                {
                    SkipRange(LastSeq + 1, rec.Seq - LastSeq, Math.Max(rec.Timestamp, LastTs));
                }

                break;
            case RecordKind.FirstMarker:
                CompactLocked(rec.Seq);
                break;
        }
    }

    /// <summary>Rewrites a damaged block with only its verifiable records, so damage is reported once.</summary>
    private void RepairBlock(MessageBlock block) => RewriteBlock(block, static (MessageBlock _, in RecordHeader _) => true);
}
