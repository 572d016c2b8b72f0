using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>What one sync round makes durable, collected under the store lock and synced outside it.</summary>
internal sealed class SyncBatch
{
    public readonly List<IStoreFile> Files = [];
    public readonly List<string> Directories = [];

    /// <summary>The meta file write this round makes durable (generation 0: none).</summary>
    public (ulong Generation, int Slot) Meta;
    public ulong MetaReserved;

    /// <summary>A stream state taken when this batch was collected: it describes durable bytes once the
    /// round and every earlier one completed.</summary>
    public byte[]? Checkpoint;
    public int CheckpointEpoch;

    public void Clear()
    {
        Files.Clear();
        Directories.Clear();
        Meta = default;
        MetaReserved = 0;
        Checkpoint = null;
    }
}

/// <summary>
/// Group commit: writers join the open round (under the store lock) and get its ticket. A round starts
/// as soon as it has work and fewer than <see cref="MaxInFlight"/> rounds are syncing: it collects
/// everything written so far (under the lock, cheap), fsyncs it outside the lock on a sync thread,
/// and its waiters are released once it and every earlier round are durable, in order. Writes that
/// arrive while fsyncs are in flight coalesce into the open round; a new fsync overlaps the running
/// ones instead of queueing behind them (the kernel and the device merge overlapping flushes, so a
/// message waits about one fsync, not one and a half). Nothing waits on a timer: an idle store costs
/// no thread and a lone write is synced at once.
/// </summary>
internal sealed class GroupCommit
{
    /// <summary>Sync rounds of one store that may be in flight at once.</summary>
    public const int MaxInFlight = 2;

    private readonly Lock _storeLock;
    private readonly IStoreFileSystem _fs;
    private readonly Action<SyncBatch> _collect;
    private readonly Action<SyncBatch> _synced;
    private readonly Action<Exception>? _faulted;
    private readonly Action? _afterRound;
    private readonly Queue<Round> _inFlight = new(); // in start order
    private Round _open = new();
    private bool _startQueued;
    private Exception? _fault;
    private long _rounds;

    /// <param name="collect">Called under <paramref name="storeLock"/>: hands pending bytes to the OS
    /// and adds every file and directory with unsynced changes to the batch (clearing their flags).</param>
    /// <param name="synced">Called under the store lock after the batch is durable, before its waiters
    /// are released; rounds report in the order they started.</param>
    /// <param name="faulted">Called under the store lock, once, when the first sync fails.</param>
    /// <param name="afterRound">Called on the sync thread outside the lock after a round's waiters were
    /// released (work that must follow durability without delaying acknowledgements).</param>
    public GroupCommit(Lock storeLock, IStoreFileSystem fs, Action<SyncBatch> collect, Action<SyncBatch> synced,
        Action<Exception>? faulted = null, Action? afterRound = null)
    {
        _afterRound = afterRound;
        _synced = synced;
        _faulted = faulted;
        _storeLock = storeLock;
        _fs = fs;
        _collect = collect;
    }

    /// <summary>Sync rounds completed (fsync batches), for benchmarks and diagnostics.</summary>
    public long Rounds => Interlocked.Read(ref _rounds);

    /// <summary>Under the store lock: the caller has unsynced changes; returns the ticket of the round
    /// that will cover them and makes sure a round runs.</summary>
    public DurabilityTicket Enlist()
    {
        if (_fault is not null)
        {
            return new DurabilityTicket(Task.FromException(_fault));
        }

        _open.HasWork = true;
        StartIfRoom();
        return new DurabilityTicket(_open.Task);
    }

    /// <summary>Under the store lock: a ticket covering every change made so far (complete when none is unsynced).</summary>
    public DurabilityTicket Current()
    {
        if (_fault is not null)
        {
            return new DurabilityTicket(Task.FromException(_fault));
        }

        if (_open.HasWork)
        {
            return new DurabilityTicket(_open.Task);
        }
        // Rounds complete in order, so the newest in flight covers every earlier one.
        Round? newest = null;
        foreach (var r in _inFlight)
        {
            newest = r;
        }

        return newest is not null ? new DurabilityTicket(newest.Task) : DurabilityTicket.Completed;
    }

    private void StartIfRoom()
    {
        if (_startQueued || !_open.HasWork || _inFlight.Count >= MaxInFlight || _fault is not null)
        {
            return;
        }

        _startQueued = true;
        SyncThreads.Run(this);
    }

    /// <summary>On a sync thread: takes the open round, collects and syncs it, then completes what is done, in order.</summary>
    internal void RunRound()
    {
        Round round;
        lock (_storeLock)
        {
            _startQueued = false;
            if (!_open.HasWork || _fault is not null || _inFlight.Count >= MaxInFlight)
            {
                return;
            }

            round = _open;
            _open = new Round();
            _inFlight.Enqueue(round);
            try
            {
                _collect(round.Batch);
            }
            catch (Exception e)
            {
                round.Finish(e);
                CompleteInOrder();
                return;
            }
            // The next writes start their own fsync now, beside this one.
            StartIfRoom();
        }
        Exception? error = null;
        try
        {
            SyncAll(round.Batch);
        }
        catch (Exception e)
        {
            error = e;
        }
        lock (_storeLock)
        {
            round.Finish(error);
            CompleteInOrder();
            StartIfRoom();
        }
        _afterRound?.Invoke();
    }

    /// <summary>Under the store lock: releases every finished round at the head of the queue.</summary>
    private void CompleteInOrder()
    {
        while (_inFlight.TryPeek(out var head) && head.Finished)
        {
            _inFlight.Dequeue();
            if (head.Error is not null || _fault is not null)
            {
                Fail(head, head.Error ?? _fault!);
                continue;
            }
            try
            {
                _synced(head.Batch);
            }
            catch (Exception e)
            {
                Fail(head, e);
                continue;
            }
            Interlocked.Increment(ref _rounds);
            head.Complete();
        }
    }

    /// <summary>A failed fsync leaves the page cache's state unknown (the kernel may have dropped the
    /// dirty pages), so every later ticket fails too instead of claiming durability.</summary>
    private void Fail(Round round, Exception e)
    {
        Fault(e);
        round.Fail(e);
    }

    /// <summary>Under the store lock: a sync of this store failed (in a round or elsewhere, e.g. the
    /// compaction pass). Linux reports a writeback error once per file, so a later fsync of the same
    /// file can succeed without the lost pages: from now on every ticket fails, including those of
    /// rounds already in flight (they complete after this, in order, and see the fault).</summary>
    public void Fault(Exception e)
    {
        if (_fault is not null)
        {
            return;
        }

        _fault = e;
        _open.Fail(e);
        _faulted?.Invoke(e);
    }

    /// <summary>Syncs a collected batch: every file first, then the directories, so a directory entry
    /// never becomes durable pointing at content that is not.</summary>
    public void SyncAll(SyncBatch batch)
    {
        foreach (var f in batch.Files)
        {
            try
            {
                f.Sync();
            }
            catch (ObjectDisposedException)
            {
                // The block was removed or rewritten meanwhile; a rewrite syncs its new file itself.
            }
        }
        foreach (var d in batch.Directories)
        {
            _fs.SyncDirectory(d);
        }
    }

    private sealed class Round
    {
        private readonly TaskCompletionSource _tcs = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public readonly SyncBatch Batch = new();

        public bool HasWork;
        public bool Finished;
        public Exception? Error;

        public Task Task => _tcs.Task;

        public void Finish(Exception? error)
        {
            Finished = true;
            Error = error;
        }

        public void Complete() => _tcs.TrySetResult();

        public void Fail(Exception e) => _tcs.TrySetException(e);
    }
}

/// <summary>
/// The threads that run sync rounds, shared by every store in the process. An fsync blocks its thread
/// for as long as the device takes; on dedicated threads that never holds up the thread pool, which
/// sends the acknowledgements the rounds release.
/// </summary>
internal static class SyncThreads
{
    private const int Count = 4;
    private static readonly System.Collections.Concurrent.BlockingCollection<GroupCommit> Queue = Start();

    public static void Run(GroupCommit commit) => Queue.Add(commit);

    private static System.Collections.Concurrent.BlockingCollection<GroupCommit> Start()
    {
        var queue = new System.Collections.Concurrent.BlockingCollection<GroupCommit>();
        for (var i = 0; i < Count; i++)
        {
            var thread = new Thread(() =>
            {
                foreach (var commit in queue.GetConsumingEnumerable())
                {
                    try
                    {
                        commit.RunRound();
                    }
                    catch (Exception)
                    {
                        // RunRound fails its round's waiters itself; one store's bug must not stop every store's syncing.
                    }
                }
            })
            {
                IsBackground = true,
                Name = "store sync " + i,
            };
            thread.Start();
        }
        return queue;
    }
}
