using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Nats.Storage.Subjects;

namespace Nats.Storage.Core;

/// <summary>
/// Searches and counts over sequence ranges that use <see cref="SubjectSpans"/> to skip spans: a span's
/// summary answers whether (and where first or last) a subject or filter occurs in it, so only the
/// span where a subject straddles the start is looked at slot by slot.
/// </summary>
internal abstract partial class StoreCore
{
    /// <summary>Most subject entries all span summaries of a store hold (~36 bytes each): 2M messages on
    /// 1,000 subjects need ~31,000.</summary>
    internal const int MaxSpanEntries = 64 * 1024;

    private SubjectSpans _spans = null!;

    /// <summary>Span summaries held now and their entries (tests and diagnostics).</summary>
    internal (int Spans, int Entries) SpanSummaries
    {
        get
        {
            lock (Sync)
            {
                return (_spans.Count, _spans.Entries);
            }
        }
    }

    /// <summary>A span summary is held: the file engine arms its cache expiry tick, which drops idle ones.</summary>
    protected virtual void OnSpanSummaryBuilt() { }

    /// <summary>Drops span summaries nobody used since the previous call; true while some stay.</summary>
    protected bool TrimIdleSpans() => _spans.TrimIdle();

    /// <summary>Slots of one range scanned one by one before a summary is worth building instead.</summary>
    private ulong SpanScanLimit => _spans.Size / 16;

    /// <summary>Slots every search looks at directly before asking summaries: a reader of a subject (or of
    /// the whole stream) usually finds its next message right there, and a summary is a dictionary walk.</summary>
    private ulong SpanScanWindow => _spans.Size / 64;

    /// <summary>The summary of the span holding <paramref name="seq"/> when the range [seq, stop] is worth
    /// one (it is complete, and the range is long or a summary is loaded already); built on demand.</summary>
    private SubjectSpans.Summary? SpanFor(ulong seq, ulong stop)
    {
        var end = _spans.SpanEnd(seq);
        if (end > LastSeq)
        {
            return null; // appends still land in it
        }

        var summary = _spans.Get(seq);
        if (summary is not null || stop - seq + 1 < SpanScanLimit)
        {
            return summary;
        }

        var start = _spans.SpanStart(seq);
        summary = new SubjectSpans.Summary(start);
        for (var s = Slots.NextPossible(Math.Max(start, FirstSeq)); s <= end; s = Slots.NextAfter(s))
        {
            if (Slots[s].Subject is { } info)
            {
                ref var e = ref CollectionsMarshal.GetValueRefOrAddDefault(summary.Map, info, out var exists);
                var off = (uint)(s - start);
                if (!exists)
                {
                    e.First = off;
                }
                e.Last = off;
                e.Count++;
            }
        }
        _spans.Add(summary);
        OnSpanSummaryBuilt();
        return summary;
    }

    private void FixSpanEntry(SubjectSpans.Summary summary, SubjectInfo info, ref SubjectSpans.Entry e)
    {
        if (e.FirstStale)
        {
            var s = Slots.NextPossible(Math.Max(summary.Start + e.First, FirstSeq));
            var last = summary.Start + e.Last;
            while (s < last && !ReferenceEquals(Slots[s].Subject, info))
            {
                s = Slots.NextAfter(s);
            }
            e.First = (uint)(Math.Min(s, last) - summary.Start);
            e.FirstStale = false;
        }
        if (e.LastStale)
        {
            var s = summary.Start + e.Last;
            var floor = summary.Start + e.First;
            while (s > floor && !ReferenceEquals(Slots[s].Subject, info))
            {
                s = Math.Max(Slots.PrevPossible(s - 1), floor);
            }
            e.Last = (uint)(s - summary.Start);
            e.LastStale = false;
        }
    }

    /// <summary>Which subjects a search looks for: one subject (a summary answers with one lookup) or every
    /// subject the filter last prepared matches (a summary answers with a walk of its subjects).</summary>
    private interface ISubjectTest
    {
        SubjectInfo? Literal { get; }

        bool Test(SubjectInfo? info);
    }

    private readonly struct LiteralTest(SubjectInfo info) : ISubjectTest
    {
        public SubjectInfo? Literal => info;

        public bool Test(SubjectInfo? other) => ReferenceEquals(other, info);
    }

    private readonly struct FilterTest(StoreCore store) : ISubjectTest
    {
        public SubjectInfo? Literal => null;

        public bool Test(SubjectInfo? info) => info is not null && store.Matches(info);
    }

    /// <summary>The first sequence in [start, end] holding <paramref name="info"/>, or 0.</summary>
    private ulong NextOfSubject(SubjectInfo info, ulong start, ulong end) => NextWhere(new LiteralTest(info), start, end);

    /// <summary>The first sequence in [start, end] whose subject matches the filter last prepared, or 0.</summary>
    private ulong NextMatching(ulong start, ulong end) => NextWhere(new FilterTest(this), start, end);

    /// <summary>The last sequence in [floor, start] holding <paramref name="info"/>, or 0.</summary>
    private ulong PrevOfSubject(SubjectInfo info, ulong start, ulong floor) => PrevWhere(new LiteralTest(info), start, floor);

    /// <summary>The last sequence in [floor, start] whose subject matches the filter last prepared, or 0.</summary>
    private ulong PrevMatching(ulong start, ulong floor) => PrevWhere(new FilterTest(this), start, floor);

    private ulong NextWhere<T>(T test, ulong start, ulong end)
        where T : struct, ISubjectTest
    {
        var s = Math.Max(start, FirstSeq);
        end = Math.Min(end, LastSeq);
        if (s <= end)
        {
            var window = Math.Min(end, s + SpanScanWindow - 1);
            if (ScanForward(test, s, window) is var near and not 0)
            {
                return near;
            }

            s = window + 1;
        }
        while (s <= end)
        {
            var spanEnd = _spans.SpanEnd(s);
            var stop = Math.Min(spanEnd, end);
            if (SpanFor(s, stop) is { } summary)
            {
                // No match precedes the earliest first sequence at or after s of a matching subject; one
                // that began before s and goes on past it may still occur between s and that.
                var (best, straddleEnd) = FirstInSpan(test, summary, s);
                if (straddleEnd >= s && ScanForward(test, s, Math.Min(Math.Min(stop, straddleEnd), best - 1)) is var found and not 0)
                {
                    return found;
                }

                if (best <= end)
                {
                    return best;
                }
            }
            else if (ScanForward(test, s, stop) is var found and not 0)
            {
                return found;
            }

            s = spanEnd + 1;
        }
        return 0;
    }

    /// <summary>The lowest first sequence at or after <paramref name="s"/> of a matching subject in the span
    /// (<see cref="ulong.MaxValue"/> if none), and the highest last sequence of those that start before
    /// <paramref name="s"/> and end after it (0 if none).</summary>
    private (ulong Best, ulong StraddleEnd) FirstInSpan<T>(T test, SubjectSpans.Summary summary, ulong s)
        where T : struct, ISubjectTest
    {
        var best = ulong.MaxValue;
        var straddleEnd = 0UL;
        if (test.Literal is { } literal)
        {
            ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, literal);
            if (!Unsafe.IsNullRef(ref e))
            {
                Fold(literal, ref e);
            }
        }
        else
        {
            foreach (var info in summary.Map.Keys)
            {
                if (test.Test(info))
                {
                    Fold(info, ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info));
                }
            }
        }
        return (best, straddleEnd);

        void Fold(SubjectInfo info, ref SubjectSpans.Entry e)
        {
            FixSpanEntry(summary, info, ref e);
            var first = summary.Start + e.First;
            var last = summary.Start + e.Last;
            if (first >= s)
            {
                best = Math.Min(best, first);
            }
            else if (last >= s)
            {
                straddleEnd = Math.Max(straddleEnd, last);
            }
        }
    }

    private ulong ScanForward<T>(T test, ulong from, ulong to)
        where T : struct, ISubjectTest
    {
        for (var q = Slots.NextPossible(from); q <= to; q = Slots.NextAfter(q))
        {
            if (test.Test(Slots[q].Subject))
            {
                return q;
            }
        }
        return 0;
    }

    private ulong PrevWhere<T>(T test, ulong start, ulong floor)
        where T : struct, ISubjectTest
    {
        floor = Math.Max(floor, FirstSeq);
        var s = Math.Min(start, LastSeq);
        if (s >= floor && s > 0)
        {
            var window = s - Math.Min(s - floor, SpanScanWindow - 1);
            if (ScanBackward(test, s, window) is var near and not 0)
            {
                return near;
            }

            if (window <= floor)
            {
                return 0;
            }

            s = window - 1;
        }
        while (s >= floor && s > 0)
        {
            var spanStart = _spans.SpanStart(s);
            var stop = Math.Max(spanStart, floor);
            SubjectSpans.Summary? summary = null;
            if (s - stop + 1 >= SpanScanLimit || _spans.Get(s) is not null)
            {
                summary = SpanFor(spanStart, s);
            }

            if (summary is not null)
            {
                // Mirror of the forward walk: no match follows the latest last sequence at or before s of a
                // matching subject, except from one that began before s and goes on past it.
                var (best, straddleStart) = LastInSpan(test, summary, s);
                if (straddleStart <= s && ScanBackward(test, s, Math.Max(Math.Max(stop, straddleStart), best + 1)) is var found and not 0)
                {
                    return found;
                }

                if (best >= floor && best > 0)
                {
                    return best;
                }
            }
            else if (ScanBackward(test, s, stop) is var found and not 0)
            {
                return found;
            }

            if (spanStart <= floor)
            {
                break;
            }

            s = spanStart - 1;
        }
        return 0;
    }

    /// <summary>The highest last sequence at or before <paramref name="s"/> of a matching subject in the span
    /// (0 if none), and the lowest first sequence of those that start before <paramref name="s"/> and end
    /// after it (<see cref="ulong.MaxValue"/> if none).</summary>
    private (ulong Best, ulong StraddleStart) LastInSpan<T>(T test, SubjectSpans.Summary summary, ulong s)
        where T : struct, ISubjectTest
    {
        var best = 0UL;
        var straddleStart = ulong.MaxValue;
        if (test.Literal is { } literal)
        {
            ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, literal);
            if (!Unsafe.IsNullRef(ref e))
            {
                Fold(literal, ref e);
            }
        }
        else
        {
            foreach (var info in summary.Map.Keys)
            {
                if (test.Test(info))
                {
                    Fold(info, ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info));
                }
            }
        }
        return (best, straddleStart);

        void Fold(SubjectInfo info, ref SubjectSpans.Entry e)
        {
            FixSpanEntry(summary, info, ref e);
            var first = summary.Start + e.First;
            var last = summary.Start + e.Last;
            if (last <= s)
            {
                best = Math.Max(best, last);
            }
            else if (first <= s)
            {
                straddleStart = Math.Min(straddleStart, first);
            }
        }
    }

    private ulong ScanBackward<T>(T test, ulong from, ulong floor)
        where T : struct, ISubjectTest
    {
        for (var q = from; q >= floor && q > 0; q--)
        {
            if (test.Test(Slots[q].Subject))
            {
                return q;
            }
        }
        return 0;
    }

    /// <summary>Messages in [from, to] whose subject carries <paramref name="mark"/> in
    /// <see cref="SubjectInfo.StraddleMark"/>: whole spans from their summaries, the rest slot by slot.</summary>
    private ulong CountMarked(ulong from, ulong to, int mark)
    {
        ulong n = 0;
        var s = Math.Max(from, FirstSeq);
        to = Math.Min(to, LastSeq);
        while (s <= to)
        {
            var spanEnd = _spans.SpanEnd(s);
            var stop = Math.Min(spanEnd, to);
            if (s == _spans.SpanStart(s) && stop == spanEnd && SpanFor(s, stop) is { } summary)
            {
                foreach (var (info, e) in summary.Map)
                {
                    if (info.StraddleMark == mark)
                    {
                        n += e.Count;
                    }
                }
            }
            else
            {
                for (var q = Slots.NextPossible(s); q <= stop; q = Slots.NextAfter(q))
                {
                    if (Slots[q].Subject is { } info && info.StraddleMark == mark)
                    {
                        n++;
                    }
                }
            }
            s = spanEnd + 1;
        }
        return n;
    }
}
