namespace Nats.Storage.Core;

/// <summary>
/// Slots addressed by sequence in fixed-size chunks: O(1) lookup, appends that never copy existing
/// entries, and whole chunks released as the first sequence moves up (and recycled for new ones).
/// </summary>
internal sealed class SlotList
{
    private const int Shift = 12;
    private const int ChunkSize = 1 << Shift;
    private const int Mask = ChunkSize - 1;

    private readonly List<Slot[]> _chunks = [];
    private readonly Stack<Slot[]> _spare = new();
    private ulong _base = 1; // sequence held by index 0 of chunk 0; always a multiple of ChunkSize plus 1
    private ulong _end = 1;  // one past the highest sequence that has a slot

    public ulong End => _end;

    public bool Contains(ulong seq) => seq >= _base && seq < _end;

    public ref Slot this[ulong seq]
    {
        get
        {
            var i = seq - _base;
            return ref _chunks[(int)(i >> Shift)][(int)(i & Mask)];
        }
    }

    /// <summary>Makes slots exist up to and including <paramref name="seq"/> (new ones empty).</summary>
    public void ExtendTo(ulong seq)
    {
        if (seq < _end)
            return;
        if (seq < _base)
            return;
        var needChunks = (int)(((seq - _base) >> Shift) + 1);
        while (_chunks.Count < needChunks)
            _chunks.Add(_spare.Count > 0 ? _spare.Pop() : new Slot[ChunkSize]);
        _end = seq + 1;
    }

    /// <summary>Forgets every slot below <paramref name="seq"/> in whole chunks; slots kept must already be empty below it.</summary>
    public void ReleaseBelow(ulong seq)
    {
        if (seq <= _base)
            return;
        if (seq >= _end)
        {
            Reset(seq);
            return;
        }
        var drop = (int)((seq - _base) >> Shift);
        if (drop == 0)
            return;
        for (var i = 0; i < drop; i++)
            Recycle(_chunks[i]);
        _chunks.RemoveRange(0, drop);
        _base += (ulong)drop << Shift;
    }

    /// <summary>Drops every slot above <paramref name="seq"/>.</summary>
    public void TruncateAfter(ulong seq)
    {
        if (seq + 1 >= _end)
            return;
        if (seq < _base)
        {
            Reset(seq + 1);
            return;
        }
        for (var s = seq + 1; s < _end; s++)
            this[s] = default;
        var keepChunks = (int)(((seq - _base) >> Shift) + 1);
        for (var i = keepChunks; i < _chunks.Count; i++)
            Recycle(_chunks[i]);
        _chunks.RemoveRange(keepChunks, _chunks.Count - keepChunks);
        _end = seq + 1;
    }

    /// <summary>Empties the list so the next slot created is <paramref name="nextSeq"/>.</summary>
    public void Reset(ulong nextSeq)
    {
        foreach (var c in _chunks)
            Recycle(c);
        _chunks.Clear();
        _base = nextSeq == 0 ? 1 : ((nextSeq - 1) & ~(ulong)Mask) + 1;
        _end = _base;
    }

    private void Recycle(Slot[] chunk)
    {
        if (_spare.Count >= 4)
            return;
        Array.Clear(chunk);
        _spare.Push(chunk);
    }
}
