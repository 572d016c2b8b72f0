namespace Nats.Storage.File;

/// <summary>
/// Block caches are dropped when idle, as Go drops a block's cache 5 s after its last use: a sealed
/// block's loaded bytes and the active block's write buffer (once everything in it is written out), so
/// a server with many quiet streams does not hold a buffer per stream. A cache used in one period is
/// kept for the next; one unused for a whole period goes back to the pool (a later read of that block
/// reads its record from the file). The active block's buffer holds only unwritten bytes unless the
/// block is read; one still written but unread for a period goes back to that. The timer runs only
/// while some cache is held; each tick also lets the shared pool release arrays idle for a period.
/// </summary>
internal sealed partial class FileStore
{
    private ITimer? _cacheTimer;
    private bool _cacheTimerArmed;
    private bool _windowsUsed;

    /// <summary>Under the lock: a cache exists (loaded or written); make sure it is looked at later.</summary>
    private void ArmCacheExpiry()
    {
        if (_cacheTimerArmed || _opts.CacheExpiry <= TimeSpan.Zero || Closed)
        {
            return;
        }

        _cacheTimer ??= (_opts.Clock ?? TimeProvider.System).CreateTimer(
            static s => ((FileStore)s!).ExpireCaches(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        _cacheTimerArmed = true;
        _cacheTimer.Change(_opts.CacheExpiry, _opts.CacheExpiry);
    }

    /// <summary>The expiry tick (and tests): drops every cache not used since the previous tick.</summary>
    internal void ExpireCaches()
    {
        lock (Sync)
        {
            if (Closed)
            {
                return;
            }

            Slots.Trim();
            DropPageIndex();
            var held = Slots.TrimIdle();
            held |= TrimIdleSpans();
            if (_windows.Held)
            {
                if (_windowsUsed)
                {
                    held = true;
                }
                else
                {
                    _windows.Release();
                }
                _windowsUsed = false;
            }
            foreach (var b in _blocks)
            {
                if (!b.HoldsBuffer)
                {
                    continue;
                }

                if (b == _active && b.KeepWhole && !b.ReadSinceLook)
                {
                    // Still written but no longer read: keep only what is not written out yet.
                    b.ReleaseReadInterest();
                    _cached.Remove(b);
                }
                b.ReadSinceLook = false;
                if (b.HoldsBuffer && (b.Used || b.HasPending))
                {
                    b.Used = false;
                    held = true;
                    continue;
                }
                b.DropCache();
                _cached.Remove(b);
            }
            // The last store to go idle keeps ticking until the pool has let go of what it returned.
            var retained = BlockBufferPool.Trim(_opts.CacheExpiry);
            if (!held && retained == 0)
            {
                _cacheTimerArmed = false;
                _cacheTimer?.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            }
        }
    }

    protected override void OnSpanSummaryBuilt() => ArmCacheExpiry();

    private void StopCacheExpiry()
    {
        _cacheTimer?.Dispose();
        _cacheTimer = null;
        _cacheTimerArmed = false;
    }
}
