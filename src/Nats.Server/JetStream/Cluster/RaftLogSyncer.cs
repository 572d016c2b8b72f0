using Microsoft.Win32.SafeHandles;
using Nats.Storage.IO;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Group commit of a RAFT log file off the RAFT loop. The loop hands what it appended to the operating system and asks
/// for a sync through its last index; one background fdatasync at a time covers every request made before it began,
/// while the loop goes on appending, sending and applying. A truncation or a rewrite starts a new generation: a round
/// begun before it cannot vouch for the entries that now carry those indexes.
/// </summary>
internal sealed class RaftLogSyncer
{
    // A monitor, not a Lock: Drain waits on it for the round in flight.
    private readonly object _lock = new();
    private SafeFileHandle? _handle;
    private bool _running;
    private bool _requested;
    private ulong _requestedIndex;
    private int _requestedGeneration;
    private int _generation;
    private ulong _durable;
    private Exception? _failure;

    /// <summary>Called on the syncing thread after each round (or its failure): the loop should look at <see cref="Durable"/>.</summary>
    public Action? Synced { get; set; }

    /// <summary>Every entry through this index is on stable storage.</summary>
    public ulong Durable
    {
        get
        {
            lock (_lock)
            {
                return _durable;
            }
        }
    }

    /// <summary>Loop: the file's bytes through <paramref name="index"/> are written (not synced); a round will sync them.</summary>
    public void Request(SafeFileHandle handle, ulong index)
    {
        lock (_lock)
        {
            ThrowIfFailed();
            _handle = handle;
            _requested = true;
            _requestedIndex = index;
            _requestedGeneration = _generation;
            if (!_running)
            {
                _running = true;
                SyncThreads.Add(this);
            }
        }
    }

    /// <summary>Loop: waits until no round is in flight (before the file is synced inline, replaced or closed).</summary>
    public void Drain()
    {
        lock (_lock)
        {
            while (_running)
            {
                Monitor.Wait(_lock);
            }
            ThrowIfFailed();
        }
    }

    /// <summary>Loop: the log was cut after <paramref name="index"/>; nothing after it is durable until a later round.</summary>
    public void Truncated(ulong index)
    {
        lock (_lock)
        {
            _generation++;
            _durable = Math.Min(_durable, index);
        }
    }

    /// <summary>Loop, with no round in flight (<see cref="Drain"/>): the file was synced inline through <paramref name="index"/>.</summary>
    public void SyncedInline(ulong index)
    {
        lock (_lock)
        {
            _generation++;
            _requested = false;
            _durable = index;
        }
    }

    private void Rounds()
    {
        while (true)
        {
            SafeFileHandle handle;
            ulong index;
            int generation;
            lock (_lock)
            {
                if (!_requested || _handle is null)
                {
                    _running = false;
                    Monitor.PulseAll(_lock);
                    return;
                }
                _requested = false;
                handle = _handle;
                index = _requestedIndex;
                generation = _requestedGeneration;
            }
            try
            {
                NativeSync.DataSync(handle);
            }
            catch (Exception e)
            {
                lock (_lock)
                {
                    _failure = e;
                    _running = false;
                    Monitor.PulseAll(_lock);
                }
                Synced?.Invoke();
                return;
            }
            lock (_lock)
            {
                if (generation == _generation && index > _durable)
                {
                    _durable = index;
                }
            }
            Synced?.Invoke();
        }
    }

    /// <summary>
    /// Threads that run the rounds of every RAFT log in the process: an fsync blocks its thread for as long as the device
    /// takes, which on the thread pool would hold up the deliveries and acknowledgements it runs (and, under load, wait
    /// for the pool to grow before the round even starts).
    /// </summary>
    private static class SyncThreads
    {
        private const int Count = 4;
        private static readonly System.Collections.Concurrent.BlockingCollection<RaftLogSyncer> Queue = Start();

        public static void Add(RaftLogSyncer syncer) => Queue.Add(syncer);

        private static System.Collections.Concurrent.BlockingCollection<RaftLogSyncer> Start()
        {
            var queue = new System.Collections.Concurrent.BlockingCollection<RaftLogSyncer>();
            for (var i = 0; i < Count; i++)
            {
                new Thread(() =>
                {
                    foreach (var syncer in queue.GetConsumingEnumerable())
                    {
                        syncer.Rounds();
                    }
                })
                {
                    IsBackground = true,
                    Name = "raft sync " + i,
                }.Start();
            }
            return queue;
        }
    }

    // A failed fsync leaves the page cache's state unknown: the node stops rather than acknowledge anything after it.
    private void ThrowIfFailed()
    {
        if (_failure is { } failure)
        {
            throw failure as IOException ?? new IOException("RAFT log sync failed: " + failure.Message, failure);
        }
    }
}
