using System.Text;
using Nats.Storage.File;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>Durability tickets: complete only once synced, shared by a round, failed with the sync.</summary>
public sealed class GroupCommitTests
{
    private static readonly byte[] Payload = Encoding.UTF8.GetBytes("group commit");

    [Fact]
    public async Task TicketsCompleteOnlyAfterTheirBytesAreSyncedAndShareOneRound()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs));
        StoreResult first;
        var more = new List<StoreResult>();
        using (fs.HoldSyncs(".blk"))
        {
            first = store.StoreMsg("g", default, Payload);
            // The round holding `first` is stuck in its fsync; these all join the next round.
            for (var i = 0; i < 50; i++)
            {
                more.Add(store.StoreMsg("g", default, Payload));
            }

            Assert.False(first.Durable.IsCompleted);
            Assert.All(more, r => Assert.False(r.Durable.IsCompleted));
            Assert.False(store.WhenDurable().IsCompleted);
        }
        await first.Durable;
        foreach (var r in more)
        {
            await r.Durable;
        }

        Assert.True(fs.IsDurable(CrashStores.BlockPath(1)));
        // At most: the first round, the round of the 50, and rounds a pool thread started in between.
        Assert.True(store.SyncRounds < 20, $"{store.SyncRounds} rounds for 51 appends");
        Assert.Same(more[^1].Durable.AsTask(), more[^2].Durable.AsTask());
        Assert.True(store.WhenDurable().IsDurable);
        store.Stop();
    }

    [Fact]
    public void AFailedSyncFailsItsTicketsAndEveryLaterOne()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs));
        store.StoreMsg("g", default, Payload).Durable.Wait();
        fs.FreezeAfter(1); // the write goes through, the sync after it fails
        var r = store.StoreMsg("g", default, Payload);
        Assert.ThrowsAny<IOException>(() => r.Durable.Wait());
        fs.FreezeAfter(-1);
        // The failed store refuses new messages outright (no sequence is used up for an error).
        Assert.Equal(StoreError.WriteFailed, Assert.Throws<StoreException>(() => store.StoreMsg("g", default, Payload)).Error);
        Assert.ThrowsAny<IOException>(() => store.WhenDurable().Wait());
    }

    [Fact]
    public void IntervalModeAcknowledgesBeforeSyncingAndAlwaysModeSyncsInsideTheCall()
    {
        var fs = new CrashFileSystem();
        var interval = CrashStores.Open(CrashStores.Options(fs) with { SyncMode = FileSyncMode.Interval });
        var syncs = fs.FileSyncs;
        var r = interval.StoreMsg("g", default, Payload);
        Assert.True(r.Durable.IsDurable);
        Assert.Equal(syncs, fs.FileSyncs);
        Assert.False(fs.IsDurable(CrashStores.BlockPath(1)));
        interval.WhenDurable().Wait(); // an explicit request syncs now
        Assert.True(fs.IsDurable(CrashStores.BlockPath(1)));
        interval.Stop();

        var fs2 = new CrashFileSystem();
        var always = CrashStores.Open(CrashStores.Options(fs2) with { SyncMode = FileSyncMode.Always });
        var a = always.StoreMsg("g", default, Payload);
        Assert.True(a.Durable.IsDurable);
        Assert.True(fs2.IsDurable(CrashStores.BlockPath(1)));
        always.Stop();
    }

    [Fact]
    public void MemoryStoreTicketsAreAlreadyComplete()
    {
        var store = StreamStores.CreateMemory(new StoreConfig());
        Assert.True(store.StoreMsg("m", default, Payload).Durable.IsDurable);
        Assert.True(store.WhenDurable().IsDurable);
        var (seq, _) = store.StoreMsg("m", default, Payload);
        Assert.Equal(2UL, seq);
    }
}
