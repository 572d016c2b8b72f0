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

    public void Clear()
    {
        Files.Clear();
        Directories.Clear();
        Meta = default;
        MetaReserved = 0;
    }
}

/// <summary>
/// Group commit: writers join the open round (under the store lock) and get its ticket; one loop at a
/// time takes the open round, collects everything written so far (under the lock, cheap), fsyncs it
/// outside the lock while new writes join the next round, then completes every waiter of the round
/// at once. With N writers in flight one fsync acknowledges up to N calls. The loop runs on the thread
/// pool only while rounds are pending, so an idle store costs no thread.
/// </summary>
internal sealed class GroupCommit
{
    private readonly Lock _storeLock;
    private readonly IStoreFileSystem _fs;
    private readonly Action<SyncBatch> _collect;
    private readonly Action<SyncBatch> _synced;
    private readonly SyncBatch _batch = new();
    private Round _open = new();
    private Round? _inFlight;
    private bool _running;
    private Exception? _fault;
    private long _rounds;

    /// <param name="collect">Called under <paramref name="storeLock"/>: hands pending bytes to the OS
    /// and adds every file and directory with unsynced changes to the batch (clearing their flags).</param>
    /// <param name="synced">Called under the store lock after the batch is durable, before its waiters are released.</param>
    public GroupCommit(Lock storeLock, IStoreFileSystem fs, Action<SyncBatch> collect, Action<SyncBatch> synced)
    {
        _synced = synced;
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
            return new DurabilityTicket(Task.FromException(_fault));
        _open.HasWork = true;
        if (!_running)
        {
            _running = true;
            ThreadPool.UnsafeQueueUserWorkItem(static s => ((GroupCommit)s!).Run(), this);
        }
        return new DurabilityTicket(_open.Task);
    }

    /// <summary>Under the store lock: a ticket covering every change made so far (complete when none is unsynced).</summary>
    public DurabilityTicket Current()
    {
        if (_fault is not null)
            return new DurabilityTicket(Task.FromException(_fault));
        if (_open.HasWork)
            return new DurabilityTicket(_open.Task);
        return _inFlight is { } r ? new DurabilityTicket(r.Task) : DurabilityTicket.Completed;
    }

    /// <summary>Runs rounds until none is pending. Only one instance runs at a time (<c>_running</c>),
    /// so the batch is never shared between two rounds.</summary>
    private void Run()
    {
        while (true)
        {
            Round round;
            lock (_storeLock)
            {
                if (!_open.HasWork || _fault is not null)
                {
                    _running = false;
                    _inFlight = null;
                    return;
                }
                round = _open;
                _open = new Round();
                _inFlight = round;
                _batch.Clear();
                try
                {
                    _collect(_batch);
                }
                catch (Exception e)
                {
                    Fail(round, e);
                    continue;
                }
            }
            try
            {
                SyncAll(_batch);
                lock (_storeLock)
                    _synced(_batch);
                Interlocked.Increment(ref _rounds);
                round.Complete();
            }
            catch (Exception e)
            {
                lock (_storeLock)
                    Fail(round, e);
            }
        }
    }

    /// <summary>A failed fsync leaves the page cache's state unknown (the kernel may have dropped the
    /// dirty pages), so every later ticket fails too instead of claiming durability.</summary>
    private void Fail(Round round, Exception e)
    {
        _fault ??= e;
        round.Fail(e);
        _open.Fail(e);
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
            _fs.SyncDirectory(d);
    }

    private sealed class Round
    {
        private readonly TaskCompletionSource _tcs = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public bool HasWork;

        public Task Task => _tcs.Task;

        public void Complete() => _tcs.TrySetResult();

        public void Fail(Exception e) => _tcs.TrySetException(e);
    }
}
