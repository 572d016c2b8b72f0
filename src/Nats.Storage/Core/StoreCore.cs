using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage.Core;

/// <summary>
/// Everything both engines share: the sequence index, the subject index, counters, limits, expiry,
/// queries and purges. An engine only decides where message bytes live (hooks at the bottom), so the
/// two engines cannot drift apart in behaviour.
/// </summary>
internal abstract partial class StoreCore : IStreamStore
{
    protected readonly Lock Sync = new();
    protected readonly SlotList Slots;
    protected readonly SubjectIndex Subjects = new();
    protected readonly TimeProvider Clock;
    protected StoreConfig Config;

    private readonly bool _payloadsInIndex;
    protected ulong FirstSeq;
    protected ulong LastSeq;
    protected long LastTs;
    protected ulong MsgCount;
    protected ulong ByteCount;
    protected bool Closed;

    private StorageUpdateHandler? _onUpdate;

    /// <param name="payloadsInIndex">The engine keeps message arrays in the index (memory engine).</param>
    /// <param name="indexShift">Log2 of the sequences per index chunk (the unit of index paging).</param>
    protected StoreCore(StoreConfig config, TimeProvider? clock, bool payloadsInIndex = false, int indexShift = 12)
    {
        Slots = new SlotList(payloadsInIndex, indexShift);
        _spans = new SubjectSpans(indexShift + 4, MaxSpanEntries);
        _payloadsInIndex = payloadsInIndex;
        Config = config;
        Clock = clock ?? TimeProvider.System;
    }

    public abstract StorageType Type { get; }

    /// <summary>Index chunks (4,096 slots each) currently allocated, for tests and diagnostics.</summary>
    internal int IndexChunks
    {
        get
        {
            lock (Sync)
            {
                return Slots.AllocatedChunks;
            }
        }
    }

    /// <summary>Bytes the sequence index holds now (resident chunks and evicted chunks' summaries).</summary>
    internal long IndexBytes
    {
        get
        {
            lock (Sync)
            {
                return Slots.MemoryBytes;
            }
        }
    }

    /// <summary>Bytes a message counts for; each engine uses the Go server's formula for its kind.</summary>
    protected abstract int MessageSize(string subject, int headerLength, int dataLength);

    /// <summary>Persists a new message and records where its bytes are in the slot.</summary>
    protected abstract void WriteMessage(ref Slot slot, ulong seq, string subject, ReadOnlySpan<byte> header,
        ReadOnlySpan<byte> data, long timestamp, long ttlExpiry);

    /// <summary>Fills <paramref name="into"/>'s header and data; false when the bytes are damaged.</summary>
    protected abstract bool ReadMessage(ulong seq, in Slot slot, StoredMessage into);

    /// <summary>A message is leaving; <paramref name="bulk"/> means a purge, compact or truncate will
    /// record the removal as a whole afterwards, so no per-message record is needed.</summary>
    protected abstract void OnRemove(ulong seq, in Slot slot, bool erase, bool bulk);

    protected abstract void OnSkip(ulong seq, ulong count, long timestamp);

    /// <summary>Everything below <paramref name="firstSeq"/> is gone (purge or compact).</summary>
    protected abstract void OnCompacted(ulong firstSeq);

    protected abstract void OnTruncated(ulong lastSeq);

    protected virtual void OnFlush() { }

    /// <summary>End of a mutating operation, still under the lock: the file engine hands everything the
    /// operation appended to the operating system in one write.</summary>
    protected virtual void OnCommit() { }

    protected virtual void OnStop() { }

    /// <summary>Read under the lock right after <see cref="OnCommit"/>: when the call's changes are durable.</summary>
    protected virtual DurabilityTicket CommitTicket => DurabilityTicket.Completed;

    public virtual DurabilityTicket WhenDurable() => DurabilityTicket.Completed;

    public virtual DurabilityTicket SetLogBacked(bool on) => DurabilityTicket.Completed;

    public ulong LastSequence
    {
        get
        {
            lock (Sync)
            {
                ThrowIfClosed();
                return LastSeq;
            }
        }
    }

    protected virtual void OnDelete() { }

    /// <summary>Before a call that adds sequences: the file engine refuses them after a failed fsync.</summary>
    protected virtual void ThrowIfReadOnly() { }

    public StoreResult StoreMsg(string subject, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data, long ttl = 0)
    {
        ulong seq;
        long ts;
        DurabilityTicket ticket;
        lock (Sync)
        {
            ThrowIfClosed();
            ThrowIfReadOnly();
            ValidateSubject(subject);
            var size = MessageSize(subject, header.Length, data.Length);
            CheckBeforeStore(subject, header.Length + data.Length, size);
            seq = LastSeq + 1;
            ts = Math.Max(NowNanos(), LastTs);
            try
            {
                StoreAt(seq, subject, header, data, ts, ttl, size);
                EnforceLimitsAfterStore(subject);
            }
            finally
            {
                OnCommit();
            }
            ticket = CommitTicket;
        }
        FireEvents();
        return new StoreResult(seq, ts, ticket);
    }

    public DurabilityTicket StoreRawMsg(string subject, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data, ulong seq, long timestamp, long ttl = 0)
    {
        DurabilityTicket ticket;
        lock (Sync)
        {
            ThrowIfClosed();
            ThrowIfReadOnly();
            ValidateSubject(subject);
            if (seq <= LastSeq)
            {
                throw new StoreException(StoreError.SequenceMismatch);
            }

            var size = MessageSize(subject, header.Length, data.Length);
            try
            {
                StoreAt(seq, subject, header, data, Math.Max(timestamp, 0), ttl, size);
                EnforceLimitsAfterStore(subject);
            }
            finally
            {
                OnCommit();
            }
            ticket = CommitTicket;
        }
        FireEvents();
        return ticket;
    }

    public ulong SkipMsg()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            ThrowIfReadOnly();
            var seq = LastSeq + 1;
            SkipRange(seq, 1, Math.Max(NowNanos(), LastTs));
            OnCommit();
            return seq;
        }
    }

    public void SkipMsgs(ulong seq, ulong num)
    {
        if (num == 0)
        {
            return;
        }

        lock (Sync)
        {
            ThrowIfClosed();
            ThrowIfReadOnly();
            if (seq != LastSeq + 1)
            {
                throw new StoreException(StoreError.SequenceMismatch);
            }

            SkipRange(seq, num, Math.Max(NowNanos(), LastTs));
            OnCommit();
        }
    }

    public void FlushAllPending()
    {
        lock (Sync)
        {
            if (!Closed)
            {
                OnFlush();
            }
        }
    }

    public void RegisterStorageUpdates(StorageUpdateHandler? handler) => _onUpdate = handler;

    public void UpdateConfig(StoreConfig config)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            if (config.Storage is { } type && type != Type)
            {
                throw new StoreException(StoreError.WrongType, Type == StorageType.Memory
                    ? "memStore requires memory storage type in config" // Go's texts
                    : "fileStore requires file storage type in config");
            }
            Config = config;
            EnforceAllLimits();
            ScheduleExpiry();
            OnCommit();
        }
        FireEvents();
    }

    public void Stop()
    {
        lock (Sync)
        {
            if (Closed)
            {
                return;
            }

            StopExpiryTimer();
            StopConsumers();
            OnStop();
            Closed = true;
        }
    }

    public void Delete()
    {
        lock (Sync)
        {
            StopExpiryTimer();
            StopConsumers();
            if (!Closed)
            {
                OnStop();
            }

            Closed = true;
            OnDelete();
        }
    }

    public void Dispose() => Stop();

    /// <summary>Places a message at <paramref name="seq"/>; callers have checked limits and ordering.</summary>
    protected void StoreAt(ulong seq, string subject, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data,
        long ts, long ttl, int size)
    {
        FillGap(seq, ts);
        Slots.ExtendTo(seq);
        var info = Subjects.GetOrAdd(subject);
        ref var slot = ref Slots.Writable(seq);
        // -1 is stored as the expiry itself so the file engine persists "never" with no new field.
        var ttlExpiry = ttl > 0 ? ts + ttl * 1_000_000_000L : ttl < 0 ? -1 : 0;
        try
        {
            WriteMessage(ref slot, seq, info.Subject, header, data, ts, ttlExpiry);
        }
        catch when (info.Count == 0)
        {
            // A refused or failed write must not leave a subject with no message behind (SubjectsState
            // would list it, and a stream state file would keep it).
            Subjects.Remove(info);
            throw;
        }
        slot.Subject = info;
        slot.Timestamp = ts;
        slot.Size = size;
        AddToCounts(seq, info, size, ts);
        if (ttlExpiry > 0)
        {
            TrackTtl(seq, ttlExpiry);
        }
        else if (ttlExpiry < 0)
        {
            MarkNeverExpires(seq);
        }

        QueueEvent(1, size, seq, info.Subject);
    }

    /// <summary>Recovery path: re-creates an index entry for a message already persisted.</summary>
    protected ref Slot RestoreSlot(ulong seq, SubjectInfo info, long ts, int size)
    {
        FillGap(seq, ts);
        Slots.ExtendTo(seq);
        ref var slot = ref Slots.Writable(seq);
        slot.Subject = info;
        slot.Timestamp = ts;
        slot.Size = size;
        AddToCounts(seq, info, size, ts);
        return ref slot;
    }

    private void AddToCounts(ulong seq, SubjectInfo info, int size, long ts)
    {
        if (info.Count == 0)
        {
            info.First = seq;
            info.FirstStale = false;
            info.LastStale = false;
        }
        info.Last = seq;
        info.LastStale = false;
        info.Count++;
        Slots.NoteLive(seq);
        if (MsgCount == 0)
        {
            FirstSeq = seq;
        }

        MsgCount++;
        ByteCount += (ulong)size;
        LastSeq = seq;
        LastTs = ts;
    }

    // Sequences skipped by a raw store with a jump keep the previous time so time search stays monotonic.
    private void FillGap(ulong seq, long ts)
    {
        if (seq <= LastSeq + 1)
        {
            return;
        }

        if (MsgCount == 0)
        {
            ResetSlots(seq);
            FirstSeq = seq;
            return;
        }
        Slots.ExtendTo(seq - 1);
        Slots.FillTimes(LastSeq + 1, seq - 1, LastTs == 0 ? ts : LastTs);
    }

    protected void SkipRange(ulong seq, ulong num, long ts)
    {
        var last = seq + num - 1;
        if (MsgCount == 0)
        {
            ResetSlots(last + 1);
            FirstSeq = last + 1;
        }
        else
        {
            Slots.ExtendTo(last);
            Slots.FillTimes(seq, last, ts);
        }
        LastSeq = last;
        LastTs = ts;
        OnSkip(seq, num, ts);
    }

    /// <summary>Takes one message out of the index and counters. The engine hook runs first so it can
    /// still see where the bytes are.</summary>
    protected void RemoveSlot(ulong seq, bool erase, bool bulk, RemovalReason reason = RemovalReason.Removed)
    {
        ref var slot = ref Slots[seq];
        var info = slot.Subject!;
        OnRemove(seq, slot, erase, bulk);
        var size = slot.Size;
        slot.Subject = null;
        _spans.OnRemove(seq, info);
        if (_payloadsInIndex)
        {
            Slots.PayloadOf(seq) = null;
        }

        Slots.NoteDead(seq); // may release the chunk: the slot reference is not used after this
        MsgCount--;
        ByteCount -= (ulong)size;

        info.Count--;
        if (info.Count == 0)
        {
            Subjects.Remove(info);
        }
        else
        {
            // Removing an end moves it by one as a safe bound; the exact value is found lazily.
            if (seq == info.First)
            {
                info.First = seq + 1;
                info.FirstStale = true;
            }
            if (seq == info.Last)
            {
                info.Last = seq - 1;
                info.LastStale = true;
            }
            if (info.Count == 1)
            {
                if (!info.LastStale)
                {
                    info.First = info.Last;
                    info.FirstStale = false;
                }
                else if (!info.FirstStale)
                {
                    info.Last = info.First;
                    info.LastStale = false;
                }
            }
        }
        _neverExpire?.Remove(seq);
        QueueEvent(-1, -size, seq, info.Subject, reason);
        if (seq == FirstSeq)
        {
            AdvanceFirst();
        }
    }

    private void AdvanceFirst()
    {
        if (MsgCount == 0)
        {
            FirstSeq = LastSeq + 1;
            ResetSlots(FirstSeq);
            return;
        }
        var s = Slots.NextPossible(FirstSeq + 1);
        while (!Slots[s].HasMessage)
        {
            s = Slots.NextAfter(s);
        }

        FirstSeq = s;
        Slots.ReleaseBelow(s);
    }

    /// <summary>Empties the index from <paramref name="nextSeq"/> on: no span summary survives a reset.</summary>
    private void ResetSlots(ulong nextSeq)
    {
        Slots.Reset(nextSeq);
        _spans.Clear();
    }

    protected void FixFirst(SubjectInfo info)
    {
        if (!info.FirstStale)
        {
            return;
        }

        var found = NextOfSubject(info, Math.Max(info.First, FirstSeq), info.Last);
        info.First = found != 0 ? found : info.Last + 1;
        info.FirstStale = false;
    }

    protected void FixLast(SubjectInfo info)
    {
        if (!info.LastStale)
        {
            return;
        }

        var floor = Math.Max(info.First, FirstSeq);
        var found = PrevOfSubject(info, Math.Min(info.Last, LastSeq), floor);
        info.Last = found != 0 ? found : floor;
        info.LastStale = false;
    }

    protected long NowNanos() => (Clock.GetUtcNow().UtcTicks - DateTime.UnixEpoch.Ticks) * 100;

    /// <summary>Called first thing under the lock by every operation. Also where cold index chunks are
    /// evicted: no <c>ref Slot</c> can be held yet, so no reference can point into a reused chunk.</summary>
    protected void ThrowIfClosed()
    {
        if (Closed)
        {
            throw new StoreException(StoreError.Closed);
        }

        Slots.Trim();
    }

    private static void ValidateSubject(string subject)
    {
        if (string.IsNullOrEmpty(subject) || SubjectRules.HasWildcard(subject))
        {
            throw new StoreException(StoreError.InvalidArgument, "invalid subject");
        }
    }
}
