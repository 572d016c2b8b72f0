using Nats.Storage.Core;

namespace Nats.Storage.File;

/// <summary>
/// Rebuilds evicted index chunks (see <see cref="SlotList"/>): a live message's subject, time, location
/// and size come from its sealed block's index file (checksummed and checked against the block's
/// length), or from the block's records when the index is missing, damaged or the block is still
/// active. One verified index is kept between rebuilds, so a sequential reader loads each block's index
/// once; it is dropped with the idle caches.
/// </summary>
internal sealed partial class FileStore : ISlotSource
{
    private MessageBlock? _pageIndexBlock;
    private byte[]? _pageIndex;
    private int _pageIndexLength;

    // Where the last rebuild stopped in the kept index: a sequential reader's next chunk starts there
    // instead of walking the block's entries from the top again.
    private BlockIndexFile.Reader.Mark _pageResume;
    private ulong _pageResumeSeq;

    /// <summary>Index pages rebuilt from disk since open (for tests and diagnostics).</summary>
    internal long IndexPageLoads { get; private set; }

    void ISlotSource.Fill(ulong first, Span<Slot> chunk, ulong[]? live, int expected)
    {
        IndexPageLoads++;
        ArmCacheExpiry(); // a paged-in chunk nobody uses again is evicted by the expiry tick
        var last = first + (ulong)chunk.Length - 1;
        if (FillPage(first, last, chunk, live, useIndex: true) == expected)
        {
            return;
        }

        // An index that disagrees with what the store knows is live is not trusted: the blocks decide.
        chunk.Clear();
        var found = FillPage(first, last, chunk, live, useIndex: false);
        if (found != expected)
        {
            // Damaged records (no per-message index names them): a message whose record still says which
            // it is points at it, so the read that fails its checksum drops it and reports it lost.
            found += PlaceDamaged(first, last, chunk, live);
        }
        if (found != expected)
        {
            // Nothing says which subjects these were, so they stay counted until a full replay reports them:
            // no stream state file may carry them over (the next open replays and verifies every block).
            _unplacedMessages = true;
            InvalidateState();
            Warn?.Invoke($"index page {first}-{last}: {expected - found} live messages were not found in their blocks");
        }
    }

    /// <summary>Live messages no rebuild could place, counted until a full replay: no state file is written.</summary>
    private bool _unplacedMessages;

    private bool StateSavable => CanSaveState && !_unplacedMessages;

    /// <summary>Places the still-missing live messages of [first, last] whose records fail their checksum but
    /// whose fixed part names them; only after every valid record was placed, so damage claiming another
    /// message's sequence never shadows that message.</summary>
    private int PlaceDamaged(ulong first, ulong last, Span<Slot> chunk, ulong[]? live)
    {
        var found = 0;
        foreach (var b in _blocks)
        {
            if (b.MinSeq == 0 || b.MaxSeq < first || b.MinSeq > last || b.Length == 0)
            {
                continue;
            }

            var cached = b.Cache;
            var buf = cached ?? MessageBlock.Rent(b.Length);
            try
            {
                var len = cached is null ? b.CopyContent(buf) : b.Length;
                for (var off = 0; off < len;)
                {
                    if (RecordCodec.TryRead(buf.AsSpan(off, len - off), out var rec))
                    {
                        off += rec.Length;
                        continue;
                    }
                    if (RecordCodec.TryReadUnverified(buf.AsSpan(off, len - off), out var claimed)
                        && claimed.Kind == RecordKind.Message && claimed.Seq >= first && claimed.Seq <= last)
                    {
                        found += Place(b, off, claimed, buf.AsSpan(off + claimed.SubjectOffset, claimed.SubjectLength), first, chunk, live);
                    }
                    off = NextValidRecord(buf, off + 1, len);
                }
            }
            finally
            {
                if (cached is null)
                {
                    MessageBlock.ReturnRented(buf);
                }
            }
        }
        return found;
    }

    private int FillPage(ulong first, ulong last, Span<Slot> chunk, ulong[]? live, bool useIndex)
    {
        var found = 0;
        foreach (var b in _blocks)
        {
            if (b.MinSeq == 0 || b.MaxSeq < first || b.MinSeq > last || b.Length == 0)
            {
                continue;
            }

            found += useIndex && b.Sealed && b != _active && PageIndexOf(b) is { } index
                ? FillFromIndex(b, index, first, last, chunk, live)
                : FillFromRecords(b, first, last, chunk, live);
        }
        return found;
    }

    private byte[]? PageIndexOf(MessageBlock block)
    {
        // A block without a usable index (only a seal summary, the default) is remembered as such too, so a
        // reader walking its records does not open the sidecar again for every chunk.
        if (_pageIndexBlock == block && _pageIndexLength == block.Length)
        {
            return _pageIndex;
        }

        _pageIndex = BlockIndexFile.TryLoad(_fs, block.Path, block.Length);
        _pageResumeSeq = 0;
        _pageIndexBlock = block;
        _pageIndexLength = block.Length;
        return _pageIndex;
    }

    /// <summary>The kept index no longer describes its block (rewritten, truncated or deleted).</summary>
    private void ForgetPageIndex(MessageBlock block)
    {
        if (_pageIndexBlock == block)
        {
            DropPageIndex();
        }
    }

    private void DropPageIndex()
    {
        _pageIndexBlock = null;
        _pageIndex = null;
    }

    private int FillFromIndex(MessageBlock block, byte[] index, ulong first, ulong last, Span<Slot> chunk, ulong[]? live)
    {
        var found = 0;
        var reader = new BlockIndexFile.Reader(index);
        if (_pageResumeSeq != 0 && first >= _pageResumeSeq)
        {
            reader.Seek(_pageResume);
        }

        while (true)
        {
            var at = reader.Position;
            if (!reader.Next(out var offset, out var rec, out var subject))
            {
                break;
            }

            if (rec.Kind != RecordKind.Message)
            {
                continue;
            }

            if (rec.Seq > last)
            {
                // Message records sit in sequence order: the next chunk's walk starts here.
                (_pageResume, _pageResumeSeq) = (at, rec.Seq);
                break;
            }
            if (rec.Seq >= first)
            {
                found += Place(block, offset, rec, subject, first, chunk, live);
            }
        }
        return found;
    }

    // Where the last rebuild from a block's records stopped (the first message past its chunk), valid while
    // the block keeps its generation: the next chunk's walk starts there instead of at the block's top.
    private MessageBlock? _walkBlock;
    private int _walkGeneration;
    private int _walkOffset;
    private ulong _walkSeq;

    private int FillFromRecords(MessageBlock block, ulong first, ulong last, Span<Slot> chunk, ulong[]? live)
    {
        if (block.Cache is null && !block.HoldsBuffer && block.Flushed == block.Length)
        {
            // Every byte is in the file: walk it through a window, from where the previous chunk stopped.
            var walked = WalkFile(block, first, last, chunk, live, out var complete);
            if (complete)
            {
                return walked;
            }

            // Damage on the way: the whole-block walk below skips it (and places only what is still missing).
            return walked + FillFromWholeBlock(block, first, last, chunk, live);
        }
        return FillFromWholeBlock(block, first, last, chunk, live);
    }

    private int WalkFile(MessageBlock block, ulong first, ulong last, Span<Slot> chunk, ulong[]? live, out bool complete)
    {
        var off = 0;
        if (_walkBlock == block && _walkGeneration == block.Generation && _walkSeq != 0 && first >= _walkSeq && _walkOffset < block.Length)
        {
            off = _walkOffset;
        }

        using var reader = new BlockIndexFile.ChunkedBlockReader(block.File, block.Length);
        var found = 0;
        while (off < block.Length)
        {
            if (!reader.TryRead(off, out var rec, out var bytes))
            {
                complete = false;
                return found;
            }

            if (rec.Kind == RecordKind.Message)
            {
                if (rec.Seq > last)
                {
                    // Message records sit in sequence order: the next chunk's walk starts here.
                    (_walkBlock, _walkGeneration, _walkOffset, _walkSeq) = (block, block.Generation, off, rec.Seq);
                    break;
                }
                if (rec.Seq >= first)
                {
                    found += Place(block, off, rec, bytes.Slice(rec.SubjectOffset, rec.SubjectLength), first, chunk, live);
                }
            }
            off += rec.Length;
        }
        complete = true;
        return found;
    }

    private int FillFromWholeBlock(MessageBlock block, ulong first, ulong last, Span<Slot> chunk, ulong[]? live)
    {
        // Not through the block cache LRU: a rebuild can run while a caller walks another block's cache,
        // which an eviction there would hand back to the pool.
        var cached = block.Cache;
        var buf = cached ?? MessageBlock.Rent(block.Length);
        try
        {
            var len = cached is null ? block.CopyContent(buf) : block.Length;
            var found = 0;
            for (var off = 0; off < len;)
            {
                if (!RecordCodec.TryRead(buf.AsSpan(off, len - off), out var rec))
                {
                    off = NextValidRecord(buf, off + 1, len);
                    continue;
                }
                if (rec.Kind == RecordKind.Message && rec.Seq >= first && rec.Seq <= last)
                {
                    found += Place(block, off, rec, buf.AsSpan(off + rec.SubjectOffset, rec.SubjectLength), first, chunk, live);
                }

                off += rec.Length;
            }
            return found;
        }
        finally
        {
            if (cached is null)
            {
                MessageBlock.ReturnRented(buf);
            }
        }
    }

    private int Place(MessageBlock block, int offset, in RecordHeader rec, ReadOnlySpan<byte> subject, ulong first, Span<Slot> chunk, ulong[]? live)
    {
        var i = (int)(rec.Seq - first);
        if ((live is not null && (live[i >> 6] & (1UL << (i & 63))) == 0) || chunk[i].HasMessage)
        {
            return 0; // removed since, or an older copy already placed (recovery keeps the first)
        }

        if (Subjects.Find(subject) is not { } info)
        {
            return 0;
        }

        ref var slot = ref chunk[i];
        slot.Subject = info;
        slot.Timestamp = rec.Timestamp;
        slot.A = block.Id;
        slot.B = offset;
        slot.Size = MessageSize(info.Subject, rec.HeaderLength, rec.DataLength);
        return 1;
    }
}
