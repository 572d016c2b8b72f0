namespace Nats.Storage.File;

internal sealed partial class FileStore
{
    private ITimer? _flushTimer;
    private ITimer? _syncTimer;
    private bool _flushArmed;
    private int _syncing;

    private void StartBackground()
    {
        var clock = _opts.Clock ?? TimeProvider.System;
        _flushTimer = clock.CreateTimer(static s => ((FileStore)s!).OnFlushTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        if (_opts.SyncInterval > TimeSpan.Zero && !_opts.SyncAlways)
            _syncTimer = clock.CreateTimer(static s => ((FileStore)s!).SyncNow(), this, _opts.SyncInterval, _opts.SyncInterval);
    }

    private void StopBackground()
    {
        _flushTimer?.Dispose();
        _syncTimer?.Dispose();
        _flushTimer = null;
        _syncTimer = null;
    }

    /// <summary>Buffered mode: one flush per delay window however many records arrive in it.</summary>
    private void ArmFlush()
    {
        if (_flushArmed || _flushTimer is null)
            return;
        _flushArmed = true;
        _flushTimer.Change(_opts.FlushDelay, Timeout.InfiniteTimeSpan);
    }

    private void OnFlushTimer()
    {
        lock (Sync)
        {
            _flushArmed = false;
            if (Closed)
                return;
            _active.WritePending();
            ProcessCandidates();
        }
    }

    /// <summary>Fsyncs every block written since the last sync. Runs outside the store lock so
    /// publishing continues while the disk catches up.</summary>
    internal void SyncNow()
    {
        if (Interlocked.Exchange(ref _syncing, 1) == 1)
            return;
        try
        {
            MessageBlock[] dirty;
            lock (Sync)
            {
                if (Closed)
                    return;
                _active.WritePending();
                ProcessCandidates();
                dirty = _blocks.Where(b => b.NeedsSync).ToArray();
                foreach (var b in dirty)
                    b.NeedsSync = false;
            }
            foreach (var b in dirty)
            {
                try
                {
                    RandomAccess.FlushToDisk(b.Handle);
                }
                catch (ObjectDisposedException)
                {
                    // Removed or rewritten meanwhile; a rewrite syncs its own file.
                }
            }
            try
            {
                _meta.Sync(); // the sequence reservation must survive power loss as well as the blocks
            }
            catch (ObjectDisposedException)
            {
            }
        }
        finally
        {
            Volatile.Write(ref _syncing, 0);
        }
    }
}
