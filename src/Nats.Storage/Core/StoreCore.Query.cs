using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private int _straddleMark;

    public SimpleState FilteredState(ulong seq, string filter)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            return Filtered(seq, filter);
        }
    }

    public (ulong Total, ulong ValidThrough) NumPending(ulong sseq, string filter, bool lastPerSubject)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (!lastPerSubject)
            {
                return (Filtered(sseq, filter).Msgs, LastSeq);
            }

            var v = new LastPerSubjectCounter(this, Math.Max(sseq, FirstSeq));
            Subjects.Match(filter, SubjectRules.IsMatchAll(filter) ? null : PrepareFilter(filter), ref v);
            return (v.Count, LastSeq);
        }
    }

    public (ulong Total, ulong ValidThrough) NumPendingMulti(ulong sseq, SubjectFilterSet filters, bool lastPerSubject)
    {
        if (filters.MatchesAll)
        {
            return NumPending(sseq, ">", lastPerSubject);
        }

        lock (Sync)
        {
            ThrowIfClosed();
            if (MsgCount == 0)
            {
                return (0, LastSeq);
            }

            sseq = Math.Max(sseq, FirstSeq);
            var mark = NextMark();
            if (lastPerSubject)
            {
                var v = new LastPerSubjectCounter(this, sseq) { Mark = mark };
                foreach (var f in filters.Filters)
                {
                    Subjects.Match(f, PrepareFilter(f), ref v);
                }

                return (v.Count, LastSeq);
            }
            if (sseq > LastSeq)
            {
                return (0, LastSeq);
            }
            // One pass over the union of matching subjects (a subject two filters match counts once),
            // then the shared straddle correction.
            var totals = new FilterTotals(this, sseq, mark) { VisitMark = mark };
            foreach (var f in filters.Filters)
            {
                Subjects.Match(f, PrepareFilter(f), ref totals);
            }

            return (CountWithStraddlers(ref totals, sseq, mark), LastSeq);
        }
    }

    public ulong[] MultiLastSeqs(IReadOnlyList<string> filters, ulong maxSeq, int maxAllowed)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (MsgCount == 0)
            {
                return [];
            }

            if (maxSeq == 0 || maxSeq > LastSeq)
            {
                maxSeq = LastSeq;
            }

            var seen = new HashSet<SubjectInfo>(ReferenceEqualityComparer.Instance);
            var seqs = new List<ulong>();
            var collector = new SubjectCollector(seen);
            foreach (var f in filters)
            {
                Subjects.Match(f, SubjectRules.IsMatchAll(f) ? null : PrepareFilter(f), ref collector);
            }

            foreach (var info in seen)
            {
                FixLast(info);
                var last = info.Last <= maxSeq ? info.Last : FindPrev(info.Subject, maxSeq);
                if (last == 0)
                {
                    continue;
                }

                seqs.Add(last);
                if (maxAllowed > 0 && seqs.Count > maxAllowed)
                {
                    throw new StoreException(StoreError.TooManyResults);
                }
            }
            seqs.Sort();
            return [.. seqs];
        }
    }

    public FastStreamState FastState()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var firstTs = MsgCount > 0 ? Slots[FirstSeq].Timestamp : 0;
            var span = MsgCount > 0 ? LastSeq - FirstSeq + 1 : 0;
            return new FastStreamState(MsgCount, ByteCount, FirstSeq,
                firstTs == 0 ? default : DateTime.UnixEpoch.AddTicks(firstTs / 100), LastSeq,
                LastTs == 0 ? default : DateTime.UnixEpoch.AddTicks(LastTs / 100), Subjects.Count, span - MsgCount);
        }
    }

    public Dictionary<string, SimpleState> SubjectsState(string filter)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var v = new Collector(this, new Dictionary<string, SimpleState>(StringComparer.Ordinal));
            Subjects.Match(filter, SubjectRules.IsMatchAll(filter) ? null : PrepareFilter(filter), ref v);
            return v.Result;
        }
    }

    public Dictionary<string, ulong> SubjectsTotals(string filter)
    {
        var states = SubjectsState(filter);
        var totals = new Dictionary<string, ulong>(states.Count, StringComparer.Ordinal);
        foreach (var (subject, st) in states)
        {
            totals[subject] = st.Msgs;
        }

        return totals;
    }

    public ulong[] AllLastSeqs()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var seqs = new ulong[Subjects.Count];
            var i = 0;
            foreach (var info in Subjects.All)
            {
                FixLast(info);
                seqs[i++] = info.Last;
            }
            Array.Sort(seqs);
            return seqs;
        }
    }

    public ulong[] DeletedSeqs()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (MsgCount == 0)
            {
                return [];
            }

            var result = new List<ulong>();
            for (var s = FirstSeq; s <= LastSeq; s++)
            {
                if (!Slots[s].HasMessage)
                {
                    result.Add(s);
                }
            }
            return [.. result];
        }
    }

    public StreamState State()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var firstTs = MsgCount > 0 ? Slots[FirstSeq].Timestamp : 0;
            var span = MsgCount > 0 ? LastSeq - FirstSeq + 1 : 0;
            return new StreamState
            {
                Msgs = MsgCount,
                Bytes = ByteCount,
                FirstSeq = FirstSeq,
                FirstTime = firstTs == 0 ? default : DateTime.UnixEpoch.AddTicks(firstTs / 100),
                LastSeq = LastSeq,
                LastTime = LastTs == 0 ? default : DateTime.UnixEpoch.AddTicks(LastTs / 100),
                NumSubjects = Subjects.Count,
                NumDeleted = span - MsgCount,
                Lost = LostSnapshot(),
            };
        }
    }

    public ulong GetSeqFromTime(DateTime time)
    {
        var ts = (time.ToUniversalTime().Ticks - DateTime.UnixEpoch.Ticks) * 100;
        lock (Sync)
        {
            ThrowIfClosed();
            if (MsgCount == 0 || ts > LastTs)
            {
                return LastSeq + 1;
            }
            // Slot timestamps never decrease (removed and skipped slots keep theirs), so binary search.
            var lo = Slots.NextPossible(Slots.SeekTime(ts, FirstSeq));
            while (lo <= LastSeq && !Slots[lo].HasMessage)
            {
                lo = Slots.NextAfter(lo);
            }

            return Math.Min(lo, LastSeq + 1);
        }
    }

    private SimpleState Filtered(ulong sseq, string filter)
    {
        if (MsgCount == 0)
        {
            return default;
        }

        if (sseq < FirstSeq)
        {
            sseq = FirstSeq;
        }

        if (sseq > LastSeq)
        {
            return default;
        }

        var first = FindNext(filter, sseq);
        if (first == 0)
        {
            return default;
        }

        if (SubjectRules.IsMatchAll(filter))
        {
            return new SimpleState(CountAllFrom(sseq), first, FindPrev(filter, LastSeq));
        }

        var tokens = PrepareFilter(filter);
        var mark = NextMark();
        var v = new FilterTotals(this, sseq, mark);
        Subjects.Match(filter, tokens, ref v);
        return new SimpleState(CountWithStraddlers(ref v, sseq, mark), first, v.Last);
    }

    private int NextMark()
    {
        if (++_straddleMark == int.MaxValue)
        {
            _straddleMark = 1;
        }

        return _straddleMark;
    }

    private ulong CountWithStraddlers(ref FilterTotals v, ulong sseq, int mark)
    {
        if (v.Visited == Subjects.Count)
        {
            // The filter matches every subject the store holds (a consumer filtered on the stream's
            // own subjects): the count comes from the index's per-chunk totals, no message visited.
            return CountAllFrom(sseq);
        }

        var total = v.Full;
        if (v.StraddleCount > 0)
        {
            // Subjects that began before sseq: count their messages on whichever side of sseq is shorter.
            // Whole spans count from their subject summaries; only the partial ones are looked into.
            total += sseq - v.StraddleLo <= v.StraddleHi - sseq + 1
                ? v.StraddleCount - CountMarked(v.StraddleLo, sseq - 1, mark)
                : CountMarked(sseq, v.StraddleHi, mark);
        }
        return total;
    }

    private ulong CountAllFrom(ulong sseq)
    {
        if (sseq <= FirstSeq)
        {
            return MsgCount;
        }

        // Whole chunks count from their live totals; only the chunk holding sseq is looked into.
        return Slots.CountLive(sseq, LastSeq);
    }

    private struct FilterTotals(StoreCore store, ulong sseq, int mark) : ISubjectVisitor
    {
        public ulong Full;
        public ulong Last;
        public ulong StraddleCount;
        public ulong StraddleLo = ulong.MaxValue;
        public ulong StraddleHi;
        public int VisitMark; // nonzero: several filters share this pass; count each subject once
        public int Visited; // distinct subjects matched

        public bool Visit(SubjectInfo info)
        {
            if (VisitMark != 0)
            {
                if (info.VisitMark == VisitMark)
                {
                    return true;
                }

                info.VisitMark = VisitMark;
            }
            Visited++;
            store.FixLast(info);
            if (info.Last < sseq)
            {
                return true;
            }

            if (info.Last > Last)
            {
                Last = info.Last;
            }

            store.FixFirst(info);
            if (info.First >= sseq)
            {
                Full += info.Count;
                return true;
            }
            info.StraddleMark = mark;
            StraddleCount += info.Count;
            StraddleLo = Math.Min(StraddleLo, info.First);
            StraddleHi = Math.Max(StraddleHi, info.Last);
            return true;
        }
    }

    private struct LastPerSubjectCounter(StoreCore store, ulong sseq) : ISubjectVisitor
    {
        public ulong Count;
        public int Mark;

        public bool Visit(SubjectInfo info)
        {
            if (Mark != 0)
            {
                if (info.VisitMark == Mark)
                {
                    return true;
                }

                info.VisitMark = Mark;
            }
            store.FixLast(info);
            if (info.Last >= sseq)
            {
                Count++;
            }

            return true;
        }
    }

    private readonly struct SubjectCollector(HashSet<SubjectInfo> seen) : ISubjectVisitor
    {
        public bool Visit(SubjectInfo info)
        {
            seen.Add(info);
            return true;
        }
    }

    private struct Collector(StoreCore store, Dictionary<string, SimpleState> result) : ISubjectVisitor
    {
        public readonly Dictionary<string, SimpleState> Result = result;

        public readonly bool Visit(SubjectInfo info)
        {
            store.FixFirst(info);
            store.FixLast(info);
            Result[info.Subject] = new SimpleState(info.Count, info.First, info.Last);
            return true;
        }
    }
}
