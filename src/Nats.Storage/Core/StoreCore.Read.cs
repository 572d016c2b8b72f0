using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    // Below this many candidate sequences a plain scan beats walking the subject trie.
    private const ulong SmallScan = 64;

    private readonly Dictionary<string, (string[] Tokens, int Epoch)> _filters = new(StringComparer.Ordinal);
    private int _nextEpoch = 1;
    private string _curFilter = "";
    private int _curEpoch;

    public StoredMessage? LoadMsg(ulong seq, StoredMessage? reuse = null)
    {
        StoredMessage? result;
        lock (Sync)
        {
            ThrowIfClosed();
            result = Slots.Contains(seq) && Slots[seq].HasMessage ? Materialize(seq, reuse) : null;
        }
        FireEvents();
        return result;
    }

    public LoadStatus TryLoadMsg(ulong seq, StoredMessage into)
    {
        LoadStatus status;
        lock (Sync)
        {
            ThrowIfClosed();
            if (seq > LastSeq || seq == 0 && LastSeq == 0)
            {
                status = LoadStatus.Eof;
            }
            else if (Slots.Contains(seq) && Slots[seq].HasMessage && Materialize(seq, into) is not null)
            {
                status = LoadStatus.Found;
            }
            else
            {
                status = LoadStatus.NotFound;
            }
        }
        FireEvents();
        return status;
    }

    public StoredMessage? LoadNextMsg(string filter, ulong start, StoredMessage? reuse = null)
        => LoadNextMsg(filter, start, reuse, out _);

    public StoredMessage? LoadNextMsg(string filter, ulong start, StoredMessage? reuse, out ulong skip)
    {
        StoredMessage? result = null;
        lock (Sync)
        {
            ThrowIfClosed();
            while (true)
            {
                var seq = FindNext(filter, start);
                if (seq == 0)
                {
                    break;
                }

                result = Materialize(seq, reuse);
                if (result is not null)
                {
                    break;
                }

                start = seq + 1; // damaged record: it is now counted as lost, carry on past it
            }
            skip = result?.Sequence ?? LastSeq;
        }
        FireEvents();
        return result;
    }

    public StoredMessage? LoadNextMsgMulti(SubjectFilterSet filters, ulong start, StoredMessage? reuse, out ulong skip)
    {
        if (filters.MatchesAll)
        {
            return LoadNextMsg(">", start, reuse, out skip);
        }

        StoredMessage? result = null;
        lock (Sync)
        {
            ThrowIfClosed();
            while (true)
            {
                var seq = FindNextMulti(filters, start);
                if (seq == 0)
                {
                    break;
                }

                result = Materialize(seq, reuse);
                if (result is not null)
                {
                    break;
                }

                start = seq + 1;
            }
            skip = result?.Sequence ?? LastSeq;
        }
        FireEvents();
        return result;
    }

    public StoredMessage? LoadPrevMsgMulti(SubjectFilterSet filters, ulong start, StoredMessage? reuse, out ulong skip)
    {
        StoredMessage? result = null;
        lock (Sync)
        {
            ThrowIfClosed();
            while (start > 0)
            {
                var seq = 0UL;
                foreach (var f in filters.Filters)
                {
                    seq = Math.Max(seq, FindPrev(f, start));
                }

                if (seq == 0)
                {
                    break;
                }

                result = Materialize(seq, reuse);
                if (result is not null)
                {
                    break;
                }

                start = seq - 1;
            }
            skip = result?.Sequence ?? 0;
        }
        FireEvents();
        return result;
    }

    /// <summary>The earliest of each filter's next match. Each filter's search is the indexed one, so the
    /// cost is the sum of the filters' costs, never a scan testing every message against every filter.</summary>
    private ulong FindNextMulti(SubjectFilterSet filters, ulong start)
    {
        var best = 0UL;
        foreach (var f in filters.Filters)
        {
            var seq = FindNext(f, start);
            if (seq != 0 && (best == 0 || seq < best))
            {
                best = seq;
                if (best <= start)
                {
                    break;
                }
            }
        }
        return best;
    }

    public StoredMessage? LoadPrevMsg(string filter, ulong start, StoredMessage? reuse = null)
    {
        StoredMessage? result = null;
        lock (Sync)
        {
            ThrowIfClosed();
            while (start > 0)
            {
                var seq = FindPrev(filter, start);
                if (seq == 0)
                {
                    break;
                }

                result = Materialize(seq, reuse);
                if (result is not null)
                {
                    break;
                }

                start = seq - 1;
            }
        }
        FireEvents();
        return result;
    }

    public StoredMessage? LoadLastMsg(string subject, StoredMessage? reuse = null)
    {
        StoredMessage? result = null;
        lock (Sync)
        {
            ThrowIfClosed();
            var seq = FindLast(subject);
            if (seq != 0)
            {
                result = Materialize(seq, reuse) ?? (LastSeq > 0 ? MaterializePrev(subject, seq - 1, reuse) : null);
            }
        }
        FireEvents();
        return result;
    }

    public string? SubjectForSeq(ulong seq)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            return Slots.Contains(seq) ? Slots[seq].Subject?.Subject : null;
        }
    }

    private StoredMessage? MaterializePrev(string filter, ulong start, StoredMessage? reuse)
    {
        while (start > 0)
        {
            var seq = FindPrev(filter, start);
            if (seq == 0)
            {
                return null;
            }

            var sm = Materialize(seq, reuse);
            if (sm is not null)
            {
                return sm;
            }

            start = seq - 1;
        }
        return null;
    }

    /// <summary>Reads a present message; damaged bytes are reported, counted as lost and removed.</summary>
    private StoredMessage? Materialize(ulong seq, StoredMessage? reuse)
    {
        ref var slot = ref Slots[seq];
        var sm = reuse ?? new StoredMessage();
        if (!ReadMessage(seq, slot, sm))
        {
            var size = slot.Size;
            RemoveSlot(seq, erase: false, bulk: false, RemovalReason.Damaged);
            RecordLost(seq, (ulong)size, $"message {seq} failed its checksum on read and was dropped");
            OnCommit();
            sm.Clear();
            return null;
        }
        sm.Subject = slot.Subject!.Subject;
        sm.Sequence = seq;
        sm.Timestamp = slot.Timestamp;
        return sm;
    }

    /// <summary>Sequence of the first message at or after <paramref name="start"/> matching the filter, or 0.</summary>
    protected ulong FindNext(string filter, ulong start)
    {
        if (MsgCount == 0)
        {
            return 0;
        }

        if (start < FirstSeq)
        {
            start = FirstSeq;
        }

        if (start > LastSeq)
        {
            return 0;
        }

        if (SubjectRules.IsMatchAll(filter))
        {
            for (var s = Slots.NextPossible(start); s <= LastSeq; s = Slots.NextAfter(s))
            {
                if (Slots[s].HasMessage)
                {
                    return s;
                }
            }
            return 0;
        }
        var tokens = PrepareFilter(filter);
        if (tokens is null)
        {
            var info = Subjects.Find(filter);
            if (info is null)
            {
                return 0;
            }

            FixFirst(info);
            if (info.Last < start)
            {
                return 0;
            }

            if (info.First >= start)
            {
                return info.First;
            }

            return NextOfSubject(info, start, info.Last);
        }
        var end = LastSeq;
        if (end - start + 1 > SmallScan)
        {
            // Narrow the scan with the subject index: no match can precede the lowest first sequence
            // (at or after start) of any matching subject, nor follow the highest last sequence.
            var bounds = new NextBounds(this, start);
            Subjects.Match(filter, tokens, ref bounds);
            if (bounds.Lo == ulong.MaxValue)
            {
                return 0;
            }

            if (bounds.Lo != start)
            {
                return bounds.Lo; // the exact first sequence of the earliest matching subject
            }

            start = bounds.Lo;
            end = bounds.Hi;
        }
        return NextMatching(start, end);
    }

    /// <summary>Sequence of the last message at or before <paramref name="start"/> matching the filter, or 0.</summary>
    protected ulong FindPrev(string filter, ulong start)
    {
        if (MsgCount == 0)
        {
            return 0;
        }

        if (start > LastSeq)
        {
            start = LastSeq;
        }

        if (start < FirstSeq)
        {
            return 0;
        }

        var floor = FirstSeq;
        var tokens = SubjectRules.IsMatchAll(filter) ? null : PrepareFilter(filter);
        if (!SubjectRules.IsMatchAll(filter) && tokens is null)
        {
            var literal = Subjects.Find(filter);
            if (literal is null)
            {
                return 0;
            }

            FixLast(literal);
            FixFirst(literal);
            if (literal.First > start)
            {
                return 0;
            }

            if (literal.Last <= start)
            {
                return literal.Last;
            }

            return PrevOfSubject(literal, start, literal.First);
        }
        if (tokens is not null)
        {
            return PrevMatching(start, floor);
        }

        for (var s = start; s >= floor; s--)
        {
            if (Slots[s].HasMessage)
            {
                return s;
            }

            if (s == 0)
            {
                break;
            }
        }
        return 0;
    }

    protected ulong FindLast(string filter)
    {
        if (MsgCount == 0)
        {
            return 0;
        }

        if (SubjectRules.IsMatchAll(filter))
        {
            return FindPrev(filter, LastSeq);
        }

        var tokens = PrepareFilter(filter);
        if (tokens is null)
        {
            var info = Subjects.Find(filter);
            if (info is null)
            {
                return 0;
            }

            FixLast(info);
            return info.Last;
        }
        var last = new LastVisitor(this);
        Subjects.Match(filter, tokens, ref last);
        return last.Max;
    }

    /// <summary>Tokenises a wildcard filter once and makes it the current one for <see cref="Matches"/>;
    /// returns null for a literal subject.</summary>
    protected string[]? PrepareFilter(string filter)
    {
        if (!SubjectRules.HasWildcard(filter))
        {
            return null;
        }

        if (!_filters.TryGetValue(filter, out var entry))
        {
            if (_filters.Count >= 256)
            {
                _filters.Clear();
            }

            entry = (SubjectTokens.Split(filter), _nextEpoch++);
            if (_nextEpoch == int.MaxValue)
            {
                _nextEpoch = 1;
            }

            _filters[filter] = entry;
        }
        _curFilter = filter;
        _curEpoch = entry.Epoch;
        return entry.Tokens;
    }

    /// <summary>Does the subject match the filter last given to <see cref="PrepareFilter"/> (memoised per subject).</summary>
    protected bool Matches(SubjectInfo info)
    {
        if (info.MatchEpoch != _curEpoch)
        {
            info.MatchResult = SubjectRules.Matches(info.Subject, _curFilter);
            info.MatchEpoch = _curEpoch;
        }
        return info.MatchResult;
    }

    private struct NextBounds(StoreCore store, ulong start) : ISubjectVisitor
    {
        public ulong Lo = ulong.MaxValue;
        public ulong Hi;

        public bool Visit(SubjectInfo info)
        {
            if (info.Last < start)
            {
                return true;
            }

            if (info.First >= start && info.FirstStale)
            {
                store.FixFirst(info);
            }

            if (info.Last > Hi)
            {
                Hi = info.Last;
            }

            if (info.First <= start)
            {
                // A subject spanning start: the answer may be start itself; stop walking (Go's MatchUntil).
                Lo = start;
                Hi = Math.Max(Hi, store.LastSeq);
                return false;
            }
            if (info.First < Lo)
            {
                Lo = info.First;
            }

            return true;
        }
    }

    private struct LastVisitor(StoreCore store) : ISubjectVisitor
    {
        public ulong Max;

        public bool Visit(SubjectInfo info)
        {
            store.FixLast(info);
            if (info.Last > Max)
            {
                Max = info.Last;
            }

            return true;
        }
    }
}
