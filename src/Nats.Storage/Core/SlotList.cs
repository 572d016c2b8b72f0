namespace Nats.Storage.Core;

/// <summary>
/// Slots addressed by sequence in fixed-size chunks: O(1) lookup, appends that never copy existing
/// entries, and memory proportional to the chunks that still hold a live message. A chunk whose last
/// live message goes is released at once (not only when the first sequence passes it), keeping just
/// its highest timestamp, so a stream with one old surviving message pays 20 bytes per 4,096 removed
/// sequences instead of 40 bytes per sequence. Reading a released slot yields an empty slot.
/// </summary>
internal sealed class SlotList
{
    private const int Shift = 12;
    private const int ChunkSize = 1 << Shift;
    private const int Mask = ChunkSize - 1;

    // Handed out for released chunks; never written (writers go through Writable).
    private static readonly Slot[] Empty = new Slot[1];

    private readonly List<Slot[]?> _chunks = [];

    // The memory engine's message arrays, chunked like the slots; null for the file engine, whose
    // slots then need no reference field for them (32 bytes a slot instead of 40).
    private readonly List<byte[]?[]?>? _payloads;
    private readonly List<int> _live = [];
    private readonly List<long> _releasedTs = []; // highest timestamp a released chunk held
    private readonly Stack<Slot[]> _spare = new();
    private ulong _base = 1; // sequence held by index 0 of chunk 0; always a multiple of ChunkSize plus 1
    private ulong _end = 1;  // one past the highest sequence that has a slot

    public SlotList(bool payloads = false) => _payloads = payloads ? [] : null;

    public ulong End => _end;

    /// <summary>Memory engine: the message array of a slot whose chunk is allocated.</summary>
    public ref byte[]? PayloadOf(ulong seq)
    {
        var i = seq - _base;
        return ref _payloads![(int)(i >> Shift)]![(int)(i & Mask)];
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
            var chunk = _chunks[(int)(i >> Shift)];
            if (chunk is null)
            {
                Empty[0] = default;
                return ref Empty[0];
            }
            return ref chunk[(int)(i & Mask)];
        }
    }

    /// <summary>The slot for writing, re-creating its chunk if it was released.</summary>
    public ref Slot Writable(ulong seq)
    {
        var i = seq - _base;
        var c = (int)(i >> Shift);
        var chunk = _chunks[c] ?? Revive(c);
        return ref chunk[(int)(i & Mask)];
    }

    /// <summary>A slot gained its message.</summary>
    public void NoteLive(ulong seq) => _live[(int)((seq - _base) >> Shift)]++;

    /// <summary>A slot lost its message; the chunk is released when it was its last and it is not the
    /// newest chunk (which appends still fill).</summary>
    public void NoteDead(ulong seq)
    {
        var c = (int)((seq - _base) >> Shift);
        if (--_live[c] > 0 || c == _chunks.Count - 1)
        {
            return;
        }

        var chunk = _chunks[c]!;
        _releasedTs[c] = chunk[Mask].Timestamp;
        _chunks[c] = null;
        if (_payloads is not null)
        {
            _payloads[c] = null;
        }

        Recycle(chunk);
    }

    /// <summary>The next sequence at or after <paramref name="seq"/> that can hold a message: skips released chunks.</summary>
    public ulong NextPossible(ulong seq)
    {
        while (seq < _end)
        {
            var c = (int)((seq - _base) >> Shift);
            if (_chunks[c] is not null)
            {
                return seq;
            }

            seq = _base + ((ulong)(c + 1) << Shift);
        }
        return seq;
    }

    /// <summary>The sequence after <paramref name="seq"/>, which must be in an allocated chunk (as every
    /// sequence a scan stands on is), skipping released chunks; the chunk is only looked at when the
    /// scan crosses into the next one.</summary>
    public ulong NextAfter(ulong seq)
    {
        var next = seq + 1;
        return ((next - _base) & Mask) != 0 ? next : NextPossible(next);
    }

    /// <summary>The previous sequence at or before <paramref name="seq"/> that can hold a message (or a
    /// sequence below the base when none).</summary>
    public ulong PrevPossible(ulong seq)
    {
        while (seq >= _base && seq < _end)
        {
            var c = (int)((seq - _base) >> Shift);
            if (_chunks[c] is not null)
            {
                return seq;
            }

            var start = _base + ((ulong)c << Shift);
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

        int lo = (int)((from - _base) >> Shift), hi = _chunks.Count - 1;
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
        var chunkStart = _base + ((ulong)lo << Shift);
        var chunk = _chunks[lo];
        if (chunk is null)
        {
            return Math.Max(chunkStart, from);
        }

        ulong a = Math.Max(chunkStart, from), b = Math.Min(chunkStart + Mask + 1, _end);
        while (a < b)
        {
            var mid = a + (b - a) / 2;
            if (chunk[(int)((mid - _base) & Mask)].Timestamp < ts)
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
        var c = (int)((seq - _base) >> Shift);
        return _chunks[c] is { } chunk ? chunk[(int)((seq - _base) & Mask)].Timestamp : _releasedTs[c];
    }

    /// <summary>Makes slots exist up to and including <paramref name="seq"/> (new ones empty).</summary>
    public void ExtendTo(ulong seq)
    {
        if (seq < _end || seq < _base)
        {
            return;
        }

        var needChunks = (int)(((seq - _base) >> Shift) + 1);
        // The newest chunk was kept while appends could still land in it; once it is not the newest,
        // it goes if nothing in it is live.
        if (_chunks.Count > 0 && _chunks.Count < needChunks && _live[^1] == 0 && _chunks[^1] is { } oldLast)
        {
            _releasedTs[^1] = oldLast[Mask].Timestamp;
            _chunks[^1] = null;
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
            _chunks.Add(last ? _spare.Count > 0 ? _spare.Pop() : new Slot[ChunkSize] : null);
            _payloads?.Add(last ? new byte[]?[ChunkSize] : null);
            _live.Add(0);
            _releasedTs.Add(0);
        }
        // The newest chunk may have been released while it was not the newest; appends need it back.
        if (_chunks[needChunks - 1] is null)
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
            var c = (int)((s - _base) >> Shift);
            var chunkEnd = Math.Min(to, _base + ((ulong)(c + 1) << Shift) - 1);
            if (_chunks[c] is { } chunk)
            {
                for (; s <= chunkEnd; s++)
                {
                    chunk[(int)((s - _base) & Mask)].Timestamp = ts;
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
        var drop = (int)((seq - _base) >> Shift);
        if (drop == 0)
        {
            return;
        }

        for (var i = 0; i < drop; i++)
        {
            if (_chunks[i] is { } c)
            {
                Recycle(c);
            }
        }
        _chunks.RemoveRange(0, drop);
        _payloads?.RemoveRange(0, drop);
        _live.RemoveRange(0, drop);
        _releasedTs.RemoveRange(0, drop);
        _base += (ulong)drop << Shift;
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
        var keepChunks = (int)(((seq - _base) >> Shift) + 1);
        var lastKept = _chunks[keepChunks - 1] ?? Revive(keepChunks - 1);
        for (var s = seq + 1; s < Math.Min(_end, _base + ((ulong)keepChunks << Shift)); s++)
        {
            lastKept[(int)((s - _base) & Mask)] = default;
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
            }
        }
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
        _base = nextSeq == 0 ? 1 : ((nextSeq - 1) & ~(ulong)Mask) + 1;
        _end = _base;
    }

    private long ChunkMaxTs(int c)
    {
        if (c == _chunks.Count - 1)
        {
            return long.MaxValue;
        }

        return _chunks[c] is { } chunk ? chunk[Mask].Timestamp : _releasedTs[c];
    }

    /// <summary>Re-creates a released chunk; its empty slots take the previous chunk's highest time so
    /// slot times still never decrease.</summary>
    private Slot[] Revive(int c)
    {
        var chunk = _spare.Count > 0 ? _spare.Pop() : new Slot[ChunkSize];
        var floor = c > 0 ? (_chunks[c - 1] is { } prev ? prev[Mask].Timestamp : _releasedTs[c - 1]) : 0;
        if (floor != 0)
        {
            for (var i = 0; i < ChunkSize; i++)
            {
                chunk[i].Timestamp = floor;
            }
        }
        _chunks[c] = chunk;
        if (_payloads is not null)
        {
            _payloads[c] = new byte[]?[ChunkSize];
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
}
