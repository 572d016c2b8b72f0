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

    /// <summary>The first sequence in [start, end] holding <paramref name="info"/>, or 0.</summary>
    private ulong NextOfSubject(SubjectInfo info, ulong start, ulong end)
    {
        var s = Math.Max(start, FirstSeq);
        end = Math.Min(end, LastSeq);
        if (s <= end)
        {
            var window = Math.Min(end, s + SpanScanWindow - 1);
            if (ScanForward(info, s, window) is var near and not 0)
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
                ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info);
                if (!Unsafe.IsNullRef(ref e))
                {
                    FixSpanEntry(summary, info, ref e);
                    var first = summary.Start + e.First;
                    if (first >= s)
                    {
                        return first <= end ? first : 0;
                    }

                    stop = Math.Min(stop, summary.Start + e.Last);
                    if (stop >= s && ScanForward(info, s, stop) is var found and not 0)
                    {
                        return found;
                    }
                }
            }
            else if (ScanForward(info, s, stop) is var found and not 0)
            {
                return found;
            }

            s = spanEnd + 1;
        }
        return 0;
    }

    private ulong ScanForward(SubjectInfo info, ulong from, ulong to)
    {
        for (var q = Slots.NextPossible(from); q <= to; q = Slots.NextAfter(q))
        {
            if (ReferenceEquals(Slots[q].Subject, info))
            {
                return q;
            }
        }
        return 0;
    }

    /// <summary>The last sequence in [floor, start] holding <paramref name="info"/>, or 0.</summary>
    private ulong PrevOfSubject(SubjectInfo info, ulong start, ulong floor)
    {
        floor = Math.Max(floor, FirstSeq);
        var s = Math.Min(start, LastSeq);
        if (s >= floor && s > 0)
        {
            var window = s - Math.Min(s - floor, SpanScanWindow - 1);
            if (ScanBackward(info, s, window) is var near and not 0)
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
                ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info);
                if (!Unsafe.IsNullRef(ref e))
                {
                    FixSpanEntry(summary, info, ref e);
                    var last = summary.Start + e.Last;
                    if (last <= s)
                    {
                        return last >= floor ? last : 0;
                    }

                    stop = Math.Max(stop, summary.Start + e.First);
                    if (ScanBackward(info, s, stop) is var found and not 0)
                    {
                        return found;
                    }
                }
            }
            else if (ScanBackward(info, s, stop) is var found and not 0)
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

    private ulong ScanBackward(SubjectInfo info, ulong from, ulong floor)
    {
        for (var q = from; q >= floor && q > 0; q--)
        {
            if (ReferenceEquals(Slots[q].Subject, info))
            {
                return q;
            }
        }
        return 0;
    }

    /// <summary>The first sequence in [start, end] whose subject matches the filter last prepared, or 0.</summary>
    private ulong NextMatching(ulong start, ulong end)
    {
        var s = Math.Max(start, FirstSeq);
        end = Math.Min(end, LastSeq);
        if (s <= end)
        {
            var window = Math.Min(end, s + SpanScanWindow - 1);
            if (ScanMatching(s, window) is var near and not 0)
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
                // The earliest first sequence at or after s of any matching subject; a matching subject
                // that began before s may still occur between s and that.
                var best = ulong.MaxValue;
                var straddles = false;
                foreach (var info in summary.Map.Keys)
                {
                    if (!Matches(info))
                    {
                        continue;
                    }

                    ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info);
                    FixSpanEntry(summary, info, ref e);
                    var first = summary.Start + e.First;
                    if (first >= s)
                    {
                        best = Math.Min(best, first);
                    }
                    else if (summary.Start + e.Last >= s)
                    {
                        straddles = true;
                    }
                }
                if (straddles && ScanMatching(s, Math.Min(stop, best - 1)) is var found and not 0)
                {
                    return found;
                }

                if (best <= end)
                {
                    return best;
                }
            }
            else if (ScanMatching(s, stop) is var found and not 0)
            {
                return found;
            }

            s = spanEnd + 1;
        }
        return 0;
    }

    private ulong ScanMatching(ulong from, ulong to)
    {
        for (var q = Slots.NextPossible(from); q <= to; q = Slots.NextAfter(q))
        {
            if (Slots[q].Subject is { } info && Matches(info))
            {
                return q;
            }
        }
        return 0;
    }

    /// <summary>The last sequence in [floor, start] whose subject matches the filter last prepared, or 0.</summary>
    private ulong PrevMatching(ulong start, ulong floor)
    {
        floor = Math.Max(floor, FirstSeq);
        var s = Math.Min(start, LastSeq);
        if (s >= floor && s > 0)
        {
            var window = s - Math.Min(s - floor, SpanScanWindow - 1);
            for (var q = s; q >= window && q > 0; q--)
            {
                if (Slots[q].Subject is { } info && Matches(info))
                {
                    return q;
                }
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
                var best = 0UL;
                var straddles = false;
                foreach (var info in summary.Map.Keys)
                {
                    if (!Matches(info))
                    {
                        continue;
                    }

                    ref var e = ref CollectionsMarshal.GetValueRefOrNullRef(summary.Map, info);
                    FixSpanEntry(summary, info, ref e);
                    var last = summary.Start + e.Last;
                    if (last <= s)
                    {
                        best = Math.Max(best, last);
                    }
                    else if (summary.Start + e.First <= s)
                    {
                        straddles = true;
                    }
                }
                if (straddles)
                {
                    for (var q = s; q > best && q >= stop && q > 0; q--)
                    {
                        if (Slots[q].Subject is { } info && Matches(info))
                        {
                            return q;
                        }
                    }
                }
                if (best >= floor && best > 0)
                {
                    return best;
                }
            }
            else
            {
                for (var q = s; q >= stop && q > 0; q--)
                {
                    if (Slots[q].Subject is { } info && Matches(info))
                    {
                        return q;
                    }
                }
            }

            if (spanStart <= floor)
            {
                break;
            }

            s = spanStart - 1;
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
