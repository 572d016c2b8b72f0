namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private PriorityQueue<ulong, long>? _ttl;
    private ITimer? _timer;
    private long _timerDue; // unix ns the timer is armed for; 0 = not armed

    // Messages stored with TTL -1 ("never"): MaxAge passes over them. Go 2.11+ semantics; Go 2.9 has no
    // per-message TTL, so there every message ages out.
    private HashSet<ulong>? _neverExpire;
    private ulong _ageFrom; // every live message below this never expires, so the age scan starts here

    private void CheckBeforeStore(string subject, int payloadLength, int size)
    {
        var cfg = Config;
        if (cfg.MaxMsgSize > 0 && payloadLength > cfg.MaxMsgSize)
        {
            throw new StoreException(StoreError.MsgTooLarge);
        }

        if (cfg.Discard != DiscardPolicy.New)
        {
            return;
        }

        if (cfg.MaxMsgs > 0 && MsgCount >= (ulong)cfg.MaxMsgs)
        {
            throw new StoreException(StoreError.MaxMsgs);
        }

        if (cfg.MaxBytes > 0 && ByteCount + (ulong)size > (ulong)cfg.MaxBytes)
        {
            throw new StoreException(StoreError.MaxBytes);
        }

        if (cfg.DiscardNewPerSubject && cfg.MaxMsgsPerSubject > 0
            && Subjects.Find(subject) is { } info && info.Count >= (ulong)cfg.MaxMsgsPerSubject)
        {
            throw new StoreException(StoreError.MaxMsgsPerSubject);
        }
    }

    private void EnforceLimitsAfterStore(string subject)
    {
        var cfg = Config;
        if (cfg.MaxMsgsPerSubject > 0 && Subjects.Find(subject) is { } info)
        {
            TrimSubject(info, (ulong)cfg.MaxMsgsPerSubject);
        }

        EnforceTotals();
        if (cfg.MaxAge > TimeSpan.Zero || _ttl is { Count: > 0 })
        {
            if (cfg.MaxAge > TimeSpan.Zero && OldestAgeable() is var oldest && oldest != 0
                && Slots[oldest].Timestamp <= NowNanos() - cfg.MaxAge.Ticks * 100)
            {
                ExpireLocked();
            }

            ScheduleExpiry();
        }
    }

    protected void EnforceAllLimits()
    {
        if (Config.MaxMsgsPerSubject > 0)
        {
            foreach (var info in Subjects.All.ToArray())
            {
                TrimSubject(info, (ulong)Config.MaxMsgsPerSubject);
            }
        }
        EnforceTotals();
        ExpireLocked();
    }

    private void EnforceTotals()
    {
        var cfg = Config;
        if (cfg.MaxMsgs > 0)
        {
            while (MsgCount > (ulong)cfg.MaxMsgs)
            {
                RemoveSlot(FirstSeq, erase: false, bulk: false, RemovalReason.MaxMsgs);
            }
        }
        if (cfg.MaxBytes > 0)
        {
            while (ByteCount > (ulong)cfg.MaxBytes && MsgCount > 0)
            {
                RemoveSlot(FirstSeq, erase: false, bulk: false, RemovalReason.MaxBytes);
            }
        }
    }

    private void TrimSubject(Subjects.SubjectInfo info, ulong max)
    {
        while (info.Count > max)
        {
            FixFirst(info);
            RemoveSlot(info.First, erase: false, bulk: false, RemovalReason.MaxMsgsPerSubject);
        }
    }

    public void ExpireMessages()
    {
        lock (Sync)
        {
            if (Closed)
            {
                return;
            }

            ExpireLocked();
            ScheduleExpiry();
            OnCommit();
        }
        FireEvents();
    }

    /// <summary>Removes messages past MaxAge (from the front only: timestamps never decrease, so no scan)
    /// and messages whose own TTL has run out.</summary>
    private void ExpireLocked()
    {
        var now = NowNanos();
        if (Config.MaxAge > TimeSpan.Zero)
        {
            var cutoff = now - Config.MaxAge.Ticks * 100;
            for (var s = OldestAgeable(); s != 0 && Slots[s].Timestamp <= cutoff; s = OldestAgeable())
            {
                RemoveSlot(s, erase: false, bulk: false, RemovalReason.MaxAge);
            }
        }
        if (_ttl is null)
        {
            return;
        }

        while (_ttl.TryPeek(out var seq, out var expiry) && expiry <= now)
        {
            _ttl.Dequeue();
            if (Slots.Contains(seq) && Slots[seq].HasMessage)
            {
                RemoveSlot(seq, erase: false, bulk: false, RemovalReason.Ttl);
            }
        }
    }

    /// <summary>Oldest live message MaxAge may remove (timestamps never decrease, so it is also the one
    /// due first), or 0. The cursor only moves up, past messages that never expire.</summary>
    private ulong OldestAgeable()
    {
        if (MsgCount == 0)
        {
            return 0;
        }

        if (_neverExpire is not { Count: > 0 })
        {
            return FirstSeq;
        }

        var s = Math.Max(_ageFrom, FirstSeq);
        while (s <= LastSeq && (!Slots[s].HasMessage || _neverExpire.Contains(s)))
        {
            s++;
        }

        _ageFrom = s;
        return s <= LastSeq ? s : 0;
    }

    protected void MarkNeverExpires(ulong seq) => (_neverExpire ??= []).Add(seq);

    protected void TrackTtl(ulong seq, long expiry)
    {
        _ttl ??= new PriorityQueue<ulong, long>();
        _ttl.Enqueue(seq, expiry);
    }

    private void ClearTtl()
    {
        _ttl?.Clear();
        _neverExpire?.Clear();
    }

    private void DropTtlAbove(ulong seq)
    {
        _neverExpire?.RemoveWhere(s => s > seq);
        _ageFrom = Math.Min(_ageFrom, seq + 1);
        if (_ttl is null || _ttl.Count == 0)
        {
            return;
        }

        var keep = _ttl.UnorderedItems.Where(e => e.Element <= seq).ToArray();
        _ttl.Clear();
        foreach (var (s, exp) in keep)
        {
            _ttl.Enqueue(s, exp);
        }
    }

    protected void ScheduleExpiry()
    {
        if (Closed)
        {
            return;
        }

        long due = long.MaxValue;
        if (Config.MaxAge > TimeSpan.Zero && OldestAgeable() is var oldest && oldest != 0)
        {
            due = Slots[oldest].Timestamp + Config.MaxAge.Ticks * 100;
        }

        if (_ttl is not null && _ttl.TryPeek(out _, out var ttlDue))
        {
            due = Math.Min(due, ttlDue);
        }

        if (due == long.MaxValue || (_timerDue != 0 && _timerDue <= due))
        {
            return;
        }

        _timerDue = due;
        var delay = TimeSpan.FromTicks(Math.Max((due - NowNanos()) / 100, TimeSpan.TicksPerMillisecond));
        if (_timer is null)
        {
            _timer = Clock.CreateTimer(static s => ((StoreCore)s!).OnExpiryTimer(), this, delay, Timeout.InfiniteTimeSpan);
        }
        else
        {
            _timer.Change(delay, Timeout.InfiniteTimeSpan);
        }
    }

    private void OnExpiryTimer()
    {
        lock (Sync)
        {
            if (Closed)
            {
                return;
            }

            _timerDue = 0;
            ExpireLocked();
            ScheduleExpiry();
            OnCommit();
        }
        FireEvents();
    }

    private void StopExpiryTimer()
    {
        _timer?.Dispose();
        _timer = null;
        _timerDue = 0;
    }
}
