using Microsoft.Extensions.Logging;

namespace Nats.Server.Hosting;

/// <summary>
/// Gives memory back to the operating system once a burst of traffic is over, as the Go runtime's
/// scavenger does. The .NET GC keeps the segments a burst made it commit (and the buffer pools keep
/// their arrays) for the next burst; a server that idles between bursts would then sit at its peak.
/// When the server has been quiet for one tick and the process grew by more than
/// <see cref="GrowthThreshold"/> since the last trim, one aggressive collection compacts the heap and
/// decommits the free space. Quiet means no bytes moved and no connection came or went, so a busy
/// server never pays for it; the cost on a quiet one is a few milliseconds per burst.
/// Only the executable turns it on (<see cref="NatsServer.TrimMemoryWhenIdle"/>): a forced collection
/// is the host's decision when the server is embedded in someone else's process.
/// </summary>
internal sealed class IdleMemoryTrimmer : IDisposable
{
    /// <summary>Growth of the resident set (bytes) over the last trimmed level that is worth a collection.</summary>
    internal const long GrowthThreshold = 8L << 20;

    /// <summary>Managed heap size (bytes, garbage included) at the first quiet tick that is worth one collection: startup
    /// with monitoring leaves Kestrel's host-building garbage (~4 MB resident); without it the heap is far smaller, and
    /// a collection would only page in the GC's stack-walking code and data for nothing.</summary>
    internal const long StartupHeapThreshold = 3L << 20;

    internal static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);

    private readonly Func<long> _activity;
    private readonly ILogger _logger;
    private readonly Timer _timer;
    private long _lastActivity = -1;
    private long _trimmedLevel;
    private int _running;
    private bool _pastStartup;

    public IdleMemoryTrimmer(Func<long> activity, ILogger logger)
    {
        _activity = activity;
        _logger = logger;
        _trimmedLevel = ResidentMemory.Bytes();
        _timer = new Timer(static s => ((IdleMemoryTrimmer)s!).OnTick(), this, Tick, Tick);
    }

    /// <summary>Collections this trimmer ran.</summary>
    public int Trims { get; private set; }

    /// <summary>After every tick, with whether it trimmed (lets tests wait on ticks instead of sleeping).</summary>
    internal event Action<bool>? Ticked;

    private void OnTick()
    {
        if (Interlocked.Exchange(ref _running, 1) == 1)
        {
            return;
        }
        var trimmed = false;
        try
        {
            var activity = _activity();
            if (activity != _lastActivity)
            {
                _lastActivity = activity;
                return;
            }
            var before = ResidentMemory.Bytes();
            var startupGarbage = !_pastStartup && GC.GetTotalMemory(forceFullCollection: false) >= StartupHeapThreshold;
            _pastStartup = true;
            if (before - _trimmedLevel < GrowthThreshold && !startupGarbage)
            {
                // Also follows the level down when memory went back on its own.
                _trimmedLevel = Math.Min(_trimmedLevel, before);
                return;
            }
            // Idle outbound chunks are the bulk of what a burst leaves behind; they are garbage once dropped.
            Clients.OutboundChunkPool.Shared.Trim();
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            _trimmedLevel = ResidentMemory.Bytes();
            Trims++;
            trimmed = true;
            _logger.LogDebug("Idle: returned memory to the system, resident {Before} -> {After} bytes", before, _trimmedLevel);
        }
        finally
        {
            Volatile.Write(ref _running, 0);
            Ticked?.Invoke(trimmed);
        }
    }

    public void Dispose() => _timer.Dispose();
}
