using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    public bool RemoveMsg(ulong seq) => Remove(seq, erase: false);

    public bool EraseMsg(ulong seq) => Remove(seq, erase: true);

    private bool Remove(ulong seq, bool erase)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (!Slots.Contains(seq) || !Slots[seq].HasMessage)
            {
                return false;
            }

            RemoveSlot(seq, erase, bulk: false, erase ? RemovalReason.Erased : RemovalReason.Removed);
            OnCommit();
        }
        FireEvents();
        return true;
    }

    public ulong Purge()
    {
        ulong purged;
        lock (Sync)
        {
            ThrowIfClosed();
            purged = PurgeAllLocked();
            OnCommit();
        }
        FireEvents();
        return purged;
    }

    public ulong Compact(ulong seq)
    {
        ulong purged;
        lock (Sync)
        {
            ThrowIfClosed();
            purged = CompactLocked(seq);
            OnCommit();
        }
        FireEvents();
        return purged;
    }

    public ulong PurgeEx(string subject, ulong seq, ulong keep)
    {
        ulong purged = 0;
        lock (Sync)
        {
            ThrowIfClosed();
            if (SubjectRules.IsMatchAll(subject))
            {
                if (keep == 0 && seq == 0)
                {
                    purged = PurgeAllLocked();
                }
                else if (seq > 1)
                {
                    purged = CompactLocked(seq);
                }
                else if (keep > 0 && keep < MsgCount)
                {
                    purged = CompactLocked(LastSeq - keep + 1);
                }
            }
            else
            {
                purged = PurgeSubjectLocked(subject, seq, keep);
            }
            OnCommit();
        }
        FireEvents();
        return purged;
    }

    public void Truncate(ulong seq)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (seq >= LastSeq)
            {
                return;
            }

            for (var s = Math.Max(seq + 1, FirstSeq); s <= LastSeq; s++)
            {
                if (Slots.Contains(s) && Slots[s].HasMessage)
                {
                    RemoveSlot(s, erase: false, bulk: true, RemovalReason.Truncate);
                }
            }
            LastTs = Slots.Contains(seq) ? Slots.TimestampAt(seq) : 0;
            LastSeq = seq;
            Slots.TruncateAfter(seq);
            _spans.Clear(); // spans past the cut are open again
            if (MsgCount == 0)
            {
                FirstSeq = seq + 1;
                ResetSlots(FirstSeq);
            }
            // Subject bounds may now point past the end; clamp them so lazy repair stays in range.
            foreach (var info in Subjects.All)
            {
                if (info.Last > seq)
                {
                    info.Last = seq;
                    info.LastStale = true;
                }
            }
            DropTtlAbove(seq);
            OnTruncated(seq);
            OnCommit();
        }
        FireEvents();
    }

    private ulong PurgeAllLocked()
    {
        var purged = MsgCount;
        if (purged > 0)
        {
            QueueEvent(-(long)purged, -(long)ByteCount, LastSeq, "", RemovalReason.Purge);
        }

        foreach (var info in Subjects.All)
        {
            info.Node = null;
        }

        Subjects.Clear();
        MsgCount = 0;
        ByteCount = 0;
        FirstSeq = LastSeq + 1;
        ResetSlots(FirstSeq);
        ClearTtl();
        OnCompacted(FirstSeq);
        return purged;
    }

    protected ulong CompactLocked(ulong seq)
    {
        if (seq == 0)
        {
            return 0;
        }

        if (MsgCount == 0 || seq > LastSeq)
        {
            var purged = PurgeAllLocked();
            if (seq > LastSeq + 1)
            {
                // Go moves the sequence up to the compact point; keep that so numbering continues from there.
                LastSeq = seq - 1;
                FirstSeq = seq;
                ResetSlots(seq);
                OnCompacted(seq);
            }
            return purged;
        }
        if (seq <= FirstSeq)
        {
            return 0;
        }

        ulong n = 0;
        // Removing the first message moves FirstSeq and releases index chunks below it, so the cursor
        // jumps to FirstSeq rather than walking through released slots.
        for (var s = FirstSeq; s < seq && MsgCount > 0; s = Math.Max(s + 1, FirstSeq))
        {
            if (Slots[s].HasMessage)
            {
                RemoveSlot(s, erase: false, bulk: true, RemovalReason.Purge);
                n++;
            }
        }
        OnCompacted(seq);
        return n;
    }

    private ulong PurgeSubjectLocked(string subject, ulong seq, ulong keep)
    {
        var ss = Filtered(1, subject);
        if (ss.Msgs == 0)
        {
            return 0;
        }

        var target = ss.Msgs;
        if (keep > 0)
        {
            if (keep >= target)
            {
                return 0;
            }

            target -= keep;
        }
        var last = seq > 1 ? seq - 1 : ss.Last;
        var tokens = PrepareFilter(subject);
        var literal = tokens is null ? Subjects.Find(subject) : null;
        ulong purged = 0;
        // Jumps from match to match (span summaries skip spans without the subject) instead of visiting
        // every slot between the subject's first and last message.
        for (var s = ss.First; purged < target && MsgCount > 0;)
        {
            s = Math.Max(s, FirstSeq);
            var end = Math.Min(last, LastSeq);
            if (s > end)
            {
                break;
            }

            var next = literal is not null ? NextOfSubject(literal, s, end) : NextMatching(s, end);
            if (next == 0)
            {
                break;
            }

            RemoveSlot(next, erase: false, bulk: false, RemovalReason.Purge);
            purged++;
            s = next + 1;
        }
        return purged;
    }
}
