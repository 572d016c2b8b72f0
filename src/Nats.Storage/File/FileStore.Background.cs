namespace Nats.Storage.File;

/// <summary>When written bytes reach the OS (flush timer) and stable storage (group commit rounds,
/// the interval timer, or inline in sync-always mode).</summary>
internal sealed partial class FileStore
{
    private ITimer? _flushTimer;
    private ITimer? _syncTimer;
    private bool _flushArmed;
    private bool _dirDirty;
    private bool _metaWanted;
    private bool _metaInFlight;
    private bool _appendedMessage; // the current mutating call appended a message record
    private ulong _durableReserved;
    private ulong _reserveStep;

    /// <summary>How far ahead a reservation may reach (the step doubles from SequenceReserve each time a
    /// writer outruns the sync rounds); also how far a store with a damaged meta file skips.</summary>
    private ulong MaxReserveStep => _opts.SequenceReserve * 64;
    private DurabilityTicket _ticket;
    private GroupCommit _commit = null!;
    private readonly SyncBatch _inlineBatch = new();

    // Group commit mode only: message appends are durable in a RAFT log, not through this store's rounds.
    private bool _logBacked;

    /// <summary>Completed sync rounds (group commit and interval modes).</summary>
    internal long SyncRounds => _commit.Rounds;

    private void StartBackground()
    {
        var clock = _opts.Clock ?? TimeProvider.System;
        _flushTimer = clock.CreateTimer(static s => ((FileStore)s!).OnFlushTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        if (_opts.SyncMode == FileSyncMode.Interval)
        {
            var interval = _opts.SyncInterval > TimeSpan.Zero ? _opts.SyncInterval : FileStoreOptions.DefaultSyncInterval;
            _syncTimer = clock.CreateTimer(static s => ((FileStore)s!).SyncNow(), this, interval, interval);
        }

        if (_opts.ScrubInterval > TimeSpan.Zero)
        {
            _scrubTimer = clock.CreateTimer(static s => ((FileStore)s!).OnScrubTimer(), this, _opts.ScrubInterval, _opts.ScrubInterval);
        }
    }

    private void StopBackground()
    {
        StopCacheExpiry();
        _flushTimer?.Dispose();
        _syncTimer?.Dispose();
        _scrubTimer?.Dispose();
        _flushTimer = null;
        _syncTimer = null;
        _scrubTimer = null;
    }

    protected override DurabilityTicket CommitTicket => _ticket;

    public override DurabilityTicket WhenDurable()
    {
        lock (Sync)
        {
            if (Closed || _opts.SyncMode == FileSyncMode.Always)
            {
                return DurabilityTicket.Completed;
            }
            // Interval mode (and appends left to a RAFT log): an explicit request for durability starts a round now.
            return _opts.SyncMode == FileSyncMode.Interval || _logBacked ? _commit.Enlist() : _commit.Current();
        }
    }

    public override DurabilityTicket SetLogBacked(bool on)
    {
        lock (Sync)
        {
            var was = _logBacked;
            _logBacked = on && _opts.SyncMode == FileSyncMode.GroupCommit;
            return was && !_logBacked && !Closed ? _commit.Enlist() : DurabilityTicket.Completed;
        }
    }

    /// <summary>Under the lock, at the end of a mutating call: hands the call's bytes to the OS and
    /// decides how the caller learns they are durable.</summary>
    protected override void OnCommit()
    {
        _ticket = DurabilityTicket.Completed;
        var appended = _appendedMessage;
        _appendedMessage = false;
        if (_recovering)
        {
            return;
        }

        if (_opts.WriteMode == FileWriteMode.WriteThrough || _opts.SyncMode == FileSyncMode.Always
            || (_opts.WriteMode == FileWriteMode.BufferedMessages && !appended))
        {
            WriteThrough();
        }
        else if (_active.HasPending)
        {
            ArmFlush();
        }

        if (_candidates.Count > 0)
        {
            ArmFlush(); // block removal and compaction happen off the publish path
        }

        switch (_opts.SyncMode)
        {
            case FileSyncMode.GroupCommit:
                _ticket = _logBacked && appended ? DurabilityTicket.Completed : _commit.Enlist();
                break;
            case FileSyncMode.Always:
                SyncInlineOrFail();
                break;
        }
    }

    /// <summary>The call's bytes to the OS before it returns; a write error fails the store and the call.</summary>
    private void WriteThrough()
    {
        try
        {
            _active.WritePending();
        }
        catch (IOException e)
        {
            Fail("write", e);
            ThrowIfReadOnly();
        }
    }

    private void SyncInlineOrFail()
    {
        try
        {
            SyncInline();
        }
        catch (IOException e)
        {
            Fail("fsync", e);
            ThrowIfReadOnly();
        }
    }

    protected override void OnFlush()
    {
        // A publisher's read loop flushes here before its acks; a failure fails the store (and with it
        // every pending ack) instead of closing the publisher's connection.
        Guarded("write", _active.WritePending);
        if (_opts.SyncMode == FileSyncMode.Always && _failure is null)
        {
            Guarded("fsync", SyncInline);
        }

        Guarded("compaction", ProcessCandidates);
    }

    /// <summary>Buffered mode: one flush per delay window however many records arrive in it.</summary>
    private void ArmFlush()
    {
        if (_flushArmed || _flushTimer is null)
        {
            return;
        }

        _flushArmed = true;
        _flushTimer.Change(_opts.FlushDelay, Timeout.InfiniteTimeSpan);
    }

    private void OnFlushTimer()
    {
        lock (Sync)
        {
            _flushArmed = false;
            if (Closed)
            {
                return;
            }

            try
            {
                _active.WritePending();
                ProcessCandidates();
                if (_opts.SyncMode == FileSyncMode.GroupCommit && !_logBacked && HasUnsynced())
                {
                    _commit.Enlist();
                }
            }
            catch (IOException e)
            {
                // Compaction fsyncs blocks from here: a failure must fail the store, or the next sync
                // round (which no longer sees those blocks as unsynced) would release acknowledgements.
                Fail("background flush or compaction", e);
            }
        }
    }

    /// <summary>Interval mode's timer, and tests: starts a sync round for everything written so far.</summary>
    internal void SyncNow()
    {
        lock (Sync)
        {
            if (Closed)
            {
                return;
            }

            _commit.Enlist();
        }
    }

    private bool HasUnsynced()
    {
        if (_active.HasPending || _dirDirty || _metaWanted)
        {
            return true;
        }

        foreach (var b in _blocks)
        {
            if (b.NeedsSync)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Under the lock (the group commit round's first step): everything unsynced into the batch.</summary>
    private void CollectUnsynced(SyncBatch batch)
    {
        if (Closed)
        {
            return; // Stop synced everything itself
        }

        _active.WritePending();
        // One meta write in flight at a time: a second write before the first is durable would go into
        // the same slot (the one not holding the durable state) while a round is still syncing it.
        if (_metaWanted && !_metaInFlight)
        {
            // Reserve well ahead so sequences keep flowing while this round's fsync runs.
            _metaWanted = false;
            _metaInFlight = true;
            _meta.Write(LastSeq + _reserveStep, _meta.CleanLast, clean: false, sync: false);
            batch.Meta = _meta.Latest;
            batch.MetaReserved = _meta.Reserved;
            batch.Files.Add(_meta.File);
        }
        foreach (var b in _blocks)
        {
            if (b.NeedsSync)
            {
                b.NeedsSync = false;
                batch.Files.Add(b.File);
            }
        }
        if (_dirDirty)
        {
            _dirDirty = false;
            batch.Directories.Add(_dir);
        }
        if (batch != _inlineBatch)
        {
            TakeCheckpointIfDue(batch);
        }
    }

    private void OnSynced(SyncBatch batch)
    {
        CheckpointDurable(batch);
        if (batch.Meta.Generation == 0)
        {
            return;
        }

        _metaInFlight = false;
        if (Closed)
        {
            return;
        }

        _meta.MarkDurable(batch.Meta);
        _durableReserved = Math.Max(_durableReserved, batch.MetaReserved);
        if (_metaWanted && _opts.SyncMode != FileSyncMode.Always)
        {
            _commit.Enlist(); // asked for while this one was in flight
        }
    }

    /// <summary>Sync-always mode: the whole round inline, under the lock, before the call returns.</summary>
    private void SyncInline()
    {
        _inlineBatch.Clear();
        CollectUnsynced(_inlineBatch);
        _commit.SyncAll(_inlineBatch);
        OnSynced(_inlineBatch);
    }

    /// <summary>
    /// No sequence above the durable reservation is ever handed out, so a crash can never reuse one:
    /// half-way through a reservation the next sync round writes and syncs a new one ahead; only a
    /// writer that outruns a whole round (more than half a reserve between two fsyncs) waits for an
    /// inline meta sync.
    /// </summary>
    private void ReserveUpTo(ulong seq)
    {
        if (seq + _reserveStep / 2 < _meta.Reserved && seq <= _durableReserved)
        {
            return;
        }

        if (seq > _durableReserved)
        {
            // The writer outran a sync round (fast publishing, slow fsyncs): reserve further ahead from
            // now on, so this inline fsync under the lock stays rare at any rate.
            _reserveStep = Math.Min(_reserveStep * 2, MaxReserveStep);
            try
            {
                _meta.Write(seq + _reserveStep, _meta.CleanLast, clean: false, sync: true);
            }
            catch (IOException e)
            {
                Fail("fsync of the sequence reservation (meta.dat)", e);
                ThrowIfReadOnly();
            }
            _durableReserved = _meta.Reserved;
            _metaWanted = false;
            return;
        }
        if (!_metaWanted)
        {
            _metaWanted = true;
            if (_opts.SyncMode != FileSyncMode.Always)
            {
                _commit.Enlist();
            }
        }
    }
}
