namespace Nats.Storage.Core;

/// <summary>
/// Slots addressed by sequence in fixed-size chunks: O(1) lookup, appends that never copy existing
/// entries, and memory proportional to the chunks that still hold a live message. A chunk whose last
/// live message goes is released at once (not only when the first sequence passes it), keeping just
/// its highest timestamp, so a stream with one old surviving message pays 20 bytes per 4,096 removed
/// sequences instead of 40 bytes per sequence. Reading a released slot yields an empty slot.
/// With a <see cref="ISlotSource"/> (the file engine) a chunk that still holds live messages can also
/// be evicted when cold (<see cref="Trim"/>): it keeps only which of its slots are live and the times of
/// its empty slots, and is rebuilt from the engine's block indexes on the next access, so index memory
/// is bounded by the resident budget instead of growing with the stream.
/// </summary>
internal sealed class SlotList
{
    private readonly int _shift;
    private readonly int _chunkSize;
    private readonly int _mask;

    // Handed out for released chunks; never written (writers go through Writable).
    private static readonly Slot[] Empty = new Slot[1];

    private readonly List<Slot[]?> _chunks = [];

    // The memory engine's message arrays, chunked like the slots; null for the file engine, whose
    // slots then need no reference field for them (32 bytes a slot instead of 40).
    private readonly List<byte[]?[]?>? _payloads;
    private readonly List<int> _live = [];
    private readonly List<long> _releasedTs = []; // highest timestamp a released chunk held
    private readonly Stack<Slot[]> _spare = new();
    private ulong _base = 1; // sequence held by index 0 of chunk 0; always a multiple of _chunkSize plus 1
    private ulong _end = 1;  // one past the highest sequence that has a slot

    public SlotList(bool payloads = false, int shift = 12)
    {
        _payloads = payloads ? [] : null;
        _shift = shift;
        _chunkSize = 1 << shift;
        _mask = _chunkSize - 1;
    }

    public ulong End => _end;

    /// <summary>Memory engine: the message array of a slot whose chunk is allocated.</summary>
    public ref byte[]? PayloadOf(ulong seq)
    {
        var i = seq - _base;
        return ref _payloads![(int)(i >> _shift)]![(int)(i & (ulong)_mask)];
    }

    /// <summary>Chunks holding slots (for memory diagnostics).</summary>
    public int AllocatedChunks => _chunks.Count(c => c is not null);

    public bool Contains(ulong seq) => seq >= _base && seq < _end;

    /// <summary>The slot for reading; a released chunk's slots read as empty.</summary>
    public ref Slot this[ulong seq]
    {
        get
        {
            var i = seq - _base;
            var chunk = Get((int)(i >> _shift));
            if (chunk is null)
            {
                Empty[0] = default;
                return ref Empty[0];
            }
            return ref chunk[(int)(i & (ulong)_mask)];
        }
    }

    /// <summary>The slot for writing, re-creating its chunk if it was released.</summary>
    public ref Slot Writable(ulong seq)
    {
        var i = seq - _base;
        var c = (int)(i >> _shift);
        var chunk = Get(c) ?? Revive(c);
        return ref chunk[(int)(i & (ulong)_mask)];
    }

    /// <summary>A slot gained its message.</summary>
    public void NoteLive(ulong seq) => _live[(int)((seq - _base) >> _shift)]++;

    /// <summary>A slot lost its message; the chunk is released when it was its last and it is not the
    /// newest chunk (which appends still fill).</summary>
    public void NoteDead(ulong seq)
    {
        var c = (int)((seq - _base) >> _shift);
        if (--_live[c] > 0 || c == _chunks.Count - 1)
        {
            return;
        }

        var chunk = Get(c)!;
        _releasedTs[c] = chunk[_mask].Timestamp;
        _chunks[c] = null;
        _resident--;
        if (_payloads is not null)
        {
            _payloads[c] = null;
        }

        Recycle(chunk);
    }

    /// <summary>Live slots in [from, to]: whole chunks by their live totals (an evicted chunk is not
    /// paged in), partial ones slot by slot.</summary>
    public ulong CountLive(ulong from, ulong to)
    {
        ulong n = 0;
        var s = Math.Max(from, _base);
        to = Math.Min(to, _end - 1);
        while (s <= to)
        {
            var c = (int)((s - _base) >> _shift);
            var chunkStart = _base + ((ulong)c << _shift);
            var chunkEnd = chunkStart + (ulong)_mask;
            if (s == chunkStart && to >= chunkEnd)
            {
                n += (ulong)_live[c];
                s = chunkEnd + 1;
                continue;
            }
            var end = Math.Min(to, chunkEnd);
            if (_live[c] > 0 && Get(c) is { } chunk)
            {
                for (; s <= end; s++)
                {
                    n += chunk[(int)((s - _base) & (ulong)_mask)].HasMessage ? 1UL : 0;
                }
            }
            s = end + 1;
        }
        return n;
    }

    /// <summary>The next sequence at or after <paramref name="seq"/> that can hold a message: skips released chunks.</summary>
    public ulong NextPossible(ulong seq)
    {
        while (seq < _end)
        {
            var c = (int)((seq - _base) >> _shift);
            if (_chunks[c] is not null || IsEvicted(c))
            {
                return seq;
            }

            seq = _base + ((ulong)(c + 1) << _shift);
        }
        return seq;
    }

    /// <summary>The sequence after <paramref name="seq"/>, which must be in an allocated chunk (as every
    /// sequence a scan stands on is), skipping released chunks; the chunk is only looked at when the
    /// scan crosses into the next one.</summary>
    public ulong NextAfter(ulong seq)
    {
        var next = seq + 1;
        return ((next - _base) & (ulong)_mask) != 0 ? next : NextPossible(next);
    }

    /// <summary>The previous sequence at or before <paramref name="seq"/> that can hold a message (or a
    /// sequence below the base when none).</summary>
    public ulong PrevPossible(ulong seq)
    {
        while (seq >= _base && seq < _end)
        {
            var c = (int)((seq - _base) >> _shift);
            if (_chunks[c] is not null || IsEvicted(c))
            {
                return seq;
            }

            var start = _base + ((ulong)c << _shift);
            if (start == 0)
            {
                return 0;
            }

            seq = start - 1;
        }
        return seq;
    }

    /// <summary>The first sequence in [from, End) whose slot time is at least <paramref name="ts"/> (slot
    /// times never decrease), or End. Released chunks are judged by the highest time they held.</summary>
    public ulong SeekTime(long ts, ulong from)
    {
        if (from >= _end)
        {
            return _end;
        }

        int lo = (int)((from - _base) >> _shift), hi = _chunks.Count - 1;
        while (lo < hi)
        {
            var mid = lo + (hi - lo) / 2;
            if (ChunkMaxTs(mid) < ts)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        var chunkStart = _base + ((ulong)lo << _shift);
        var chunk = Get(lo);
        if (chunk is null)
        {
            return Math.Max(chunkStart, from);
        }

        ulong a = Math.Max(chunkStart, from), b = Math.Min(chunkStart + (ulong)_chunkSize, _end);
        while (a < b)
        {
            var mid = a + (b - a) / 2;
            if (chunk[(int)((mid - _base) & (ulong)_mask)].Timestamp < ts)
            {
                a = mid + 1;
            }
            else
            {
                b = mid;
            }
        }
        return a;
    }

    /// <summary>Last timestamp recorded at <paramref name="seq"/> (a released chunk: the highest it held).</summary>
    public long TimestampAt(ulong seq)
    {
        var c = (int)((seq - _base) >> _shift);
        return Get(c) is { } chunk ? chunk[(int)((seq - _base) & (ulong)_mask)].Timestamp : _releasedTs[c];
    }

    /// <summary>Makes slots exist up to and including <paramref name="seq"/> (new ones empty).</summary>
    public void ExtendTo(ulong seq)
    {
        if (seq < _end || seq < _base)
        {
            return;
        }

        var needChunks = (int)(((seq - _base) >> _shift) + 1);
        // The newest chunk was kept while appends could still land in it; once it is not the newest,
        // it goes if nothing in it is live.
        if (_chunks.Count > 0 && _chunks.Count < needChunks && _live[^1] == 0 && _chunks[^1] is { } oldLast)
        {
            _releasedTs[^1] = oldLast[_mask].Timestamp;
            _chunks[^1] = null;
            _resident--;
            if (_payloads is not null)
            {
                _payloads[^1] = null;
            }

            Recycle(oldLast);
        }
        while (_chunks.Count < needChunks)
        {
            // Only the chunk that will hold seq is allocated; chunks a jump passes over hold no message
            // and start out released (their times are set by FillTimes).
            var last = _chunks.Count == needChunks - 1;
            _chunks.Add(last ? _spare.Count > 0 ? _spare.Pop() : new Slot[_chunkSize] : null);
            _payloads?.Add(last ? new byte[]?[_chunkSize] : null);
            _live.Add(0);
            _releasedTs.Add(0);
            AddPagingEntry();
            if (last)
            {
                _resident++;
            }
        }
        // The newest chunk may have been released while it was not the newest; appends need it back.
        if (Get(needChunks - 1) is null)
        {
            Revive(needChunks - 1);
        }

        _end = seq + 1;
    }

    /// <summary>Gives the empty slots [from, to] the time <paramref name="ts"/> (skips and gaps keep a time so
    /// time lookups stay monotonic); released chunks just record it as their highest time.</summary>
    public void FillTimes(ulong from, ulong to, long ts)
    {
        var s = from;
        while (s <= to)
        {
            var c = (int)((s - _base) >> _shift);
            var chunkEnd = Math.Min(to, _base + ((ulong)(c + 1) << _shift) - 1);
            if (Get(c) is { } chunk)
            {
                for (; s <= chunkEnd; s++)
                {
                    chunk[(int)((s - _base) & (ulong)_mask)].Timestamp = ts;
                }
            }
            else
            {
                _releasedTs[c] = Math.Max(_releasedTs[c], ts);
                s = chunkEnd + 1;
            }
        }
    }

    /// <summary>Forgets every slot below <paramref name="seq"/> in whole chunks; slots kept must already be empty below it.</summary>
    public void ReleaseBelow(ulong seq)
    {
        if (seq <= _base)
        {
            return;
        }

        if (seq >= _end)
        {
            Reset(seq);
            return;
        }
        var drop = (int)((seq - _base) >> _shift);
        if (drop == 0)
        {
            return;
        }

        for (var i = 0; i < drop; i++)
        {
            if (_chunks[i] is { } c)
            {
                Recycle(c);
                _resident--;
            }
        }
        _chunks.RemoveRange(0, drop);
        RemovePagingEntries(0, drop);
        _payloads?.RemoveRange(0, drop);
        _live.RemoveRange(0, drop);
        _releasedTs.RemoveRange(0, drop);
        _base += (ulong)drop << _shift;
    }

    /// <summary>Drops every slot above <paramref name="seq"/>.</summary>
    public void TruncateAfter(ulong seq)
    {
        if (seq + 1 >= _end)
        {
            return;
        }

        if (seq < _base)
        {
            Reset(seq + 1);
            return;
        }
        var keepChunks = (int)(((seq - _base) >> _shift) + 1);
        var lastKept = Get(keepChunks - 1) ?? Revive(keepChunks - 1);
        for (var s = seq + 1; s < Math.Min(_end, _base + ((ulong)keepChunks << _shift)); s++)
        {
            lastKept[(int)((s - _base) & (ulong)_mask)] = default;
            if (_payloads is not null)
            {
                PayloadOf(s) = null;
            }
        }
        for (var i = keepChunks; i < _chunks.Count; i++)
        {
            if (_chunks[i] is { } c)
            {
                Recycle(c);
                _resident--;
            }
        }
        RemovePagingEntries(keepChunks, _chunks.Count - keepChunks);
        _chunks.RemoveRange(keepChunks, _chunks.Count - keepChunks);
        _payloads?.RemoveRange(keepChunks, _payloads.Count - keepChunks);
        _live.RemoveRange(keepChunks, _live.Count - keepChunks);
        _releasedTs.RemoveRange(keepChunks, _releasedTs.Count - keepChunks);
        _end = seq + 1;
    }

    /// <summary>Empties the list so the next slot created is <paramref name="nextSeq"/>.</summary>
    public void Reset(ulong nextSeq)
    {
        foreach (var c in _chunks)
        {
            if (c is not null)
            {
                Recycle(c);
            }
        }
        _chunks.Clear();
        _payloads?.Clear();
        _live.Clear();
        _releasedTs.Clear();
        RemovePagingEntries(0, _evicted.Count);
        _resident = 0;
        _base = nextSeq == 0 ? 1 : ((nextSeq - 1) & ~(ulong)_mask) + 1;
        _end = _base;
    }

    private long ChunkMaxTs(int c)
    {
        if (c == _chunks.Count - 1)
        {
            return long.MaxValue;
        }

        return _chunks[c] is { } chunk ? chunk[_mask].Timestamp : _releasedTs[c];
    }

    /// <summary>Re-creates a released chunk; its empty slots take the previous chunk's highest time so
    /// slot times still never decrease.</summary>
    private Slot[] Revive(int c)
    {
        var chunk = _spare.Count > 0 ? _spare.Pop() : new Slot[_chunkSize];
        var floor = c > 0 ? (_chunks[c - 1] is { } prev ? prev[_mask].Timestamp : _releasedTs[c - 1]) : 0;
        if (floor != 0)
        {
            for (var i = 0; i < _chunkSize; i++)
            {
                chunk[i].Timestamp = floor;
            }
        }
        _chunks[c] = chunk;
        _resident++;
        if (_payloads is not null)
        {
            _payloads[c] = new byte[]?[_chunkSize];
        }

        _live[c] = 0;
        return chunk;
    }

    private void Recycle(Slot[] chunk)
    {
        if (_spare.Count >= 4)
        {
            return;
        }

        Array.Clear(chunk);
        _spare.Push(chunk);
    }
    // ---- Paging (file engine): cold chunks with live messages leave memory and come back from disk.

    private ISlotSource? _source;
    private int _maxResident = int.MaxValue;
    private int _resident;
    private long _tick;
    private readonly List<EvictedChunk?> _evicted = [];
    private readonly List<long> _use = [];

    /// <summary>What an evicted chunk keeps: which slots are live (null: all of them) and the times of its
    /// empty slots that the rebuild rule (an empty slot takes the previous slot's time) would not give.</summary>
    private sealed class EvictedChunk(ulong[]? live, ushort[] tsIndex, long[] tsValue)
    {
        public readonly ulong[]? Live = live;
        public readonly ushort[] TsIndex = tsIndex;
        public readonly long[] TsValue = tsValue;

        public long Bytes => 48 + (Live is null ? 0 : 8L * Live.Length + 24) + 10L * TsIndex.Length + 48;
    }

    /// <summary>Lets cold chunks be evicted and rebuilt by <paramref name="source"/>, keeping at most
    /// <paramref name="maxResident"/> chunks in memory between operations (the newest always stays).</summary>
    public void EnablePaging(ISlotSource source, int maxResident)
    {
        _source = source;
        _maxResident = Math.Max(1, maxResident);
    }

    public int ChunkShift => _shift;

    /// <summary>Bytes a resident chunk costs.</summary>
    public int ChunkBytes => _chunkSize * System.Runtime.CompilerServices.Unsafe.SizeOf<Slot>();

    /// <summary>Index bytes held now: resident chunks, evicted chunks' summaries and the per-chunk lists.</summary>
    public long MemoryBytes
    {
        get
        {
            long bytes = (long)_resident * ChunkBytes + _chunks.Count * 40L;
            foreach (var e in _evicted)
            {
                bytes += e?.Bytes ?? 0;
            }
            return bytes;
        }
    }

    public int ResidentChunks => _resident;

    public int EvictedChunks => _evicted.Count(e => e is not null);

    private bool IsEvicted(int c) => c < _evicted.Count && _evicted[c] is not null;

    /// <summary>The chunk, paged back in if it was evicted; null when released.</summary>
    private Slot[]? Get(int c)
    {
        var chunk = _chunks[c];
        if (_source is null)
        {
            return chunk;
        }

        _use[c] = ++_tick;
        return chunk ?? (_evicted[c] is not null ? PageIn(c) : null);
    }

    private void AddPagingEntry()
    {
        _evicted.Add(null);
        _use.Add(_tick);
    }

    private void RemovePagingEntries(int at, int count)
    {
        _evicted.RemoveRange(at, count);
        _use.RemoveRange(at, count);
    }

    /// <summary>Evicts the least recently used chunks until the resident budget holds. Call only where no
    /// <c>ref Slot</c> is held (at the start of an operation, on a timer): an evicted chunk's array is reused.</summary>
    public void Trim()
    {
        if (_resident <= _maxResident || _source is null)
        {
            return;
        }

        while (_resident > _maxResident)
        {
            var victim = -1;
            var oldest = long.MaxValue;
            for (var c = 0; c < _chunks.Count - 1; c++)
            {
                if (_chunks[c] is not null && _live[c] > 0 && _use[c] < oldest)
                {
                    (victim, oldest) = (c, _use[c]);
                }
            }
            if (victim < 0)
            {
                return;
            }

            Evict(victim);
        }
    }

    // The use tick at the previous idle trim: chunks not used since then are cold.
    private long _idleMark;

    /// <summary>Evicts every chunk nobody used since the previous call (the cache expiry tick calls it), so a
    /// store nobody reads keeps only its newest chunk, as its block caches go after a period. Same rule as
    /// <see cref="Trim"/>: only where no <c>ref Slot</c> is held. True while chunks other than the newest stay
    /// resident (they are looked at again on the next tick).</summary>
    public bool TrimIdle()
    {
        if (_source is null)
        {
            return false;
        }

        var kept = false;
        for (var c = 0; c < _chunks.Count - 1; c++)
        {
            if (_chunks[c] is null || _live[c] == 0)
            {
                continue;
            }

            if (_use[c] <= _idleMark)
            {
                Evict(c);
            }
            else
            {
                kept = true;
            }
        }
        _idleMark = _tick;
        return kept;
    }

    private void Evict(int c)
    {
        var chunk = _chunks[c]!;
        _evicted[c] = Summarize(c, chunk);
        _releasedTs[c] = chunk[_mask].Timestamp;
        _chunks[c] = null;
        _resident--;
        Recycle(chunk);
    }

    private EvictedChunk Summarize(int c, Slot[] chunk)
    {
        var live = _live[c] == _chunkSize ? null : new ulong[(_chunkSize + 63) / 64];
        var exceptions = 0;
        for (var i = 0; i < _chunkSize; i++)
        {
            if (chunk[i].HasMessage)
            {
                if (live is not null)
                {
                    live[i >> 6] |= 1UL << (i & 63);
                }
            }
            else if (i == 0 || chunk[i].Timestamp != chunk[i - 1].Timestamp)
            {
                exceptions++;
            }
        }
        var tsIndex = exceptions == 0 ? [] : new ushort[exceptions];
        var tsValue = exceptions == 0 ? [] : new long[exceptions];
        var k = 0;
        for (var i = 0; i < _chunkSize && k < exceptions; i++)
        {
            if (!chunk[i].HasMessage && (i == 0 || chunk[i].Timestamp != chunk[i - 1].Timestamp))
            {
                tsIndex[k] = (ushort)i;
                tsValue[k++] = chunk[i].Timestamp;
            }
        }
        return new EvictedChunk(live, tsIndex, tsValue);
    }

    /// <summary>Writes the index as summaries only (live maps and empty-slot times, no locations), so a
    /// clean restart rebuilds it without reading a message: chunks come back from disk when touched.</summary>
    public void Save(BinaryWriter w)
    {
        w.Write(_shift);
        w.Write(_base);
        w.Write(_end);
        w.Write(_chunks.Count);
        for (var c = 0; c < _chunks.Count; c++)
        {
            w.Write(_live[c]);
            var chunk = _chunks[c];
            w.Write(chunk is not null ? chunk[_mask].Timestamp : _releasedTs[c]);
            var e = chunk is not null ? Summarize(c, chunk) : _evicted[c];
            if (e is null)
            {
                w.Write((byte)0);
                continue;
            }
            w.Write((byte)(e.Live is null ? 1 : 2));
            foreach (var bits in e.Live ?? [])
            {
                w.Write(bits);
            }

            w.Write(e.TsIndex.Length);
            for (var k = 0; k < e.TsIndex.Length; k++)
            {
                w.Write(e.TsIndex[k]);
                w.Write(e.TsValue[k]);
            }
        }
    }

    /// <summary>Restores what <see cref="Save"/> wrote, every chunk evicted (paging must be enabled).</summary>
    public void Load(BinaryReader r)
    {
        if (r.ReadInt32() != _shift || _source is null)
        {
            throw new InvalidDataException("index chunk size differs");
        }

        Reset(1);
        _base = r.ReadUInt64();
        _end = r.ReadUInt64();
        var count = r.ReadInt32();
        for (var c = 0; c < count; c++)
        {
            _chunks.Add(null);
            _live.Add(r.ReadInt32());
            _releasedTs.Add(r.ReadInt64());
            AddPagingEntry();
            var kind = r.ReadByte();
            if (kind == 0)
            {
                continue;
            }

            ulong[]? live = null;
            if (kind == 2)
            {
                live = new ulong[(_chunkSize + 63) / 64];
                for (var i = 0; i < live.Length; i++)
                {
                    live[i] = r.ReadUInt64();
                }
            }
            var n = r.ReadInt32();
            var tsIndex = n == 0 ? [] : new ushort[n];
            var tsValue = n == 0 ? [] : new long[n];
            for (var k = 0; k < n; k++)
            {
                tsIndex[k] = r.ReadUInt16();
                tsValue[k] = r.ReadInt64();
            }
            _evicted[c] = new EvictedChunk(live, tsIndex, tsValue);
        }
    }

    private Slot[] PageIn(int c)
    {
        var e = _evicted[c]!;
        var chunk = _spare.Count > 0 ? _spare.Pop() : new Slot[_chunkSize];
        var first = _base + ((ulong)c << _shift);
        _source!.Fill(first, chunk, e.Live, _live[c]);
        var k = 0;
        for (var i = 0; i < _chunkSize; i++)
        {
            if (chunk[i].HasMessage)
            {
                continue;
            }

            chunk[i].Timestamp = k < e.TsIndex.Length && e.TsIndex[k] == i ? e.TsValue[k++] : i > 0 ? chunk[i - 1].Timestamp : 0;
        }
        _evicted[c] = null;
        _chunks[c] = chunk;
        _resident++;
        return chunk;
    }
}

/// <summary>Rebuilds an evicted index chunk from storage.</summary>
internal interface ISlotSource
{
    /// <summary>Fills the slots of the live sequences of [first, first + chunk.Length) (<paramref name="live"/>
    /// bit i set, or all when null) with subject, time, location and size; <paramref name="expected"/> is
    /// how many there are.</summary>
    void Fill(ulong first, Span<Slot> chunk, ulong[]? live, int expected);
}
