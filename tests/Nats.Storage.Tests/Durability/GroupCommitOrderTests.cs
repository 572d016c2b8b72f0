using Nats.Storage.File;
using Nats.Storage.IO;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>Overlapping sync rounds: a later round's fsync may finish first, but its waiters are
/// released only after every earlier round, in start order.</summary>
public sealed class GroupCommitOrderTests
{
    private sealed class GatedFile(string path, ManualResetEventSlim? gate) : IStoreFile
    {
        public readonly ManualResetEventSlim Entered = new();
        public readonly ManualResetEventSlim Returned = new();

        public string Path => path;
        public long Length => 0;
        public int Read(Span<byte> buffer, long offset) => 0;
        public void Write(ReadOnlySpan<byte> data, long offset) { }
        public void SetLength(long length) { }

        public void Sync()
        {
            Entered.Set();
            gate?.Wait();
            Returned.Set();
        }

        public void Dispose() { }
    }

    [Fact]
    public async Task ALaterRoundThatSyncedFirstWaitsForTheEarlierOne()
    {
        var storeLock = new Lock();
        using var slowGate = new ManualResetEventSlim();
        var slow = new GatedFile("slow", slowGate);
        var fast = new GatedFile("fast", null);
        var next = new Queue<IStoreFile>([slow, fast]);
        var synced = new List<string>();
        var commit = new GroupCommit(storeLock, new CrashFileSystem(),
            batch => batch.Files.Add(next.Dequeue()),
            batch => synced.Add(batch.Files[0].Path));

        DurabilityTicket first, second;
        lock (storeLock)
        {
            first = commit.Enlist();
        }

        Assert.True(slow.Entered.Wait(TimeSpan.FromMinutes(1)), "the first round never started its fsync");
        lock (storeLock)
        {
            second = commit.Enlist(); // starts beside the stuck one
        }

        Assert.NotSame(first.AsTask(), second.AsTask());
        Assert.True(fast.Returned.Wait(TimeSpan.FromMinutes(1)), "the second round did not overlap the first");
        Assert.False(second.IsCompleted);
        lock (storeLock)
        {
            Assert.Empty(synced);
        }

        slowGate.Set();
        await second.AsTask().WaitAsync(TimeSpan.FromMinutes(1));
        Assert.True(first.IsDurable);
        lock (storeLock)
        {
            Assert.Equal(["slow", "fast"], synced);
        }

        Assert.Equal(2, commit.Rounds);
    }

    [Fact]
    public async Task AFailedEarlierRoundFailsTheLaterOneEvenIfItsFsyncSucceeded()
    {
        var storeLock = new Lock();
        using var gate = new ManualResetEventSlim();
        var failing = new FailingFile(gate);
        var fast = new GatedFile("fast", null);
        var next = new Queue<IStoreFile>([failing, fast]);
        var commit = new GroupCommit(storeLock, new CrashFileSystem(), batch => batch.Files.Add(next.Dequeue()), _ => { });

        DurabilityTicket first, second;
        lock (storeLock)
        {
            first = commit.Enlist();
        }

        Assert.True(failing.Entered.Wait(TimeSpan.FromMinutes(1)));
        lock (storeLock)
        {
            second = commit.Enlist();
        }

        Assert.True(fast.Returned.Wait(TimeSpan.FromMinutes(1)));
        gate.Set();
        await Assert.ThrowsAsync<IOException>(() => first.AsTask().WaitAsync(TimeSpan.FromMinutes(1)));
        await Assert.ThrowsAsync<IOException>(() => second.AsTask().WaitAsync(TimeSpan.FromMinutes(1)));
    }

    private sealed class FailingFile(ManualResetEventSlim gate) : IStoreFile
    {
        public readonly ManualResetEventSlim Entered = new();

        public string Path => "failing";
        public long Length => 0;
        public int Read(Span<byte> buffer, long offset) => 0;
        public void Write(ReadOnlySpan<byte> data, long offset) { }
        public void SetLength(long length) { }

        public void Sync()
        {
            Entered.Set();
            gate.Wait();
            throw new IOException("fsync failed");
        }

        public void Dispose() { }
    }
}
