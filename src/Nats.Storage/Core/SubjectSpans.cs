using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Nats.Storage.Subjects;

namespace Nats.Storage.Core;

/// <summary>
/// Per-span subject summaries, the role of Go's per-block <c>fss</c>: for a span of 2^shift sequences,
/// each subject it holds with its count and first and last sequence. A filtered read, count or purge
/// asks a span's summary instead of visiting its slots, so a subject absent from a span costs one
/// lookup, not 65,536 slot visits (and, in the file engine, no index page rebuilt from disk). Only
/// complete spans (every sequence at or below the last one) are summarized, so appends never touch a
/// summary; removals keep loaded ones exact (an end that goes is moved by one and marked stale, and
/// repaired from the span's slots when next asked, as <see cref="SubjectInfo"/> does). Summaries are
/// built from the slots on first use, bounded by an entry budget (least recently used go first) and
/// dropped when idle, so their memory follows what readers touch, not the stream's length.
/// </summary>
internal sealed class SubjectSpans(int shift, int maxEntries)
{
    internal struct Entry
    {
        public uint First; // offsets from the span's first sequence
        public uint Last;
        public uint Count;
        public bool FirstStale;
        public bool LastStale;
    }

    internal sealed class Summary(ulong start)
    {
        public readonly ulong Start = start;
        public readonly Dictionary<SubjectInfo, Entry> Map = new(ReferenceEqualityComparer.Instance);
        public long Use;
    }

    private readonly Dictionary<ulong, Summary> _spans = [];
    private long _tick;
    private long _idleMark;

    public int Shift => shift;

    public ulong Size => 1UL << shift;

    /// <summary>Summaries held now (tests and diagnostics).</summary>
    public int Count => _spans.Count;

    /// <summary>Subject entries across every held summary; the budget is counted in these.</summary>
    public int Entries { get; private set; }

    public ulong SpanStart(ulong seq) => (((seq - 1) >> shift) << shift) + 1;

    public ulong SpanEnd(ulong seq) => SpanStart(seq) + Size - 1;

    public Summary? Get(ulong seq)
    {
        if (_spans.TryGetValue((seq - 1) >> shift, out var summary))
        {
            summary.Use = ++_tick;
            return summary;
        }
        return null;
    }

    /// <summary>Keeps a freshly built summary, evicting the least recently used others over the budget.</summary>
    public void Add(Summary summary)
    {
        summary.Use = ++_tick;
        _spans[(summary.Start - 1) >> shift] = summary;
        Entries += summary.Map.Count;
        while (Entries > maxEntries && _spans.Count > 1)
        {
            Summary? victim = null;
            foreach (var s in _spans.Values)
            {
                if (s != summary && (victim is null || s.Use < victim.Use))
                {
                    victim = s;
                }
            }
            Drop(victim!);
        }
    }

    /// <summary>A message left: a loaded summary of its span stays exact.</summary>
    public void OnRemove(ulong seq, SubjectInfo info)
    {
        if (_spans.Count == 0 || !_spans.TryGetValue((seq - 1) >> shift, out var summary))
        {
            return;
        }

        ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info);
        if (Unsafe.IsNullRef(ref e))
        {
            return;
        }

        if (--e.Count == 0)
        {
            summary.Map.Remove(info);
            Entries--;
            return;
        }
        var off = (uint)(seq - summary.Start);
        if (off == e.First)
        {
            e.First = off + 1;
            e.FirstStale = true;
        }
        if (off == e.Last)
        {
            e.Last = off - 1;
            e.LastStale = true;
        }
    }

    /// <summary>Sequences were renumbered or emptied wholesale (purge, truncate, reset): nothing held is valid.</summary>
    public void Clear()
    {
        _spans.Clear();
        Entries = 0;
    }

    /// <summary>Drops every summary nobody used since the previous call (the cache expiry tick); true while
    /// some stay.</summary>
    public bool TrimIdle()
    {
        List<Summary>? idle = null;
        foreach (var s in _spans.Values)
        {
            if (s.Use <= _idleMark)
            {
                (idle ??= []).Add(s);
            }
        }
        if (idle is not null)
        {
            foreach (var s in idle)
            {
                Drop(s);
            }
        }
        _idleMark = _tick;
        return _spans.Count > 0;
    }

    private void Drop(Summary summary)
    {
        _spans.Remove((summary.Start - 1) >> shift);
        Entries -= summary.Map.Count;
    }
}
