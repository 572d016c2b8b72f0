using System.Text;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>
/// The orders in which the file store must make things durable, checked directly on the simulated
/// disk (what would survive a power loss at that instant) and by crashing and recovering.
/// </summary>
public sealed class SyncOrderingTests
{
    private static readonly byte[] Payload = Encoding.UTF8.GetBytes(new string('p', 100));

    [Fact]
    public void ARotatedBlockIsDurableBeforeAnythingInTheNextBlockIsAcknowledged()
    {
        for (var seed = 0; seed < 20; seed++)
        {
            var fs = new CrashFileSystem();
            var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
            StoreResult r;
            do
            {
                r = store.StoreMsg("rot", default, Payload);
            }
            while (store.BlockPaths.Count < 2);
            r.Durable.Wait();
            Assert.True(fs.IsDurable(CrashStores.BlockPath(1)), "the sealed block must be fully synced, with its directory entry");
            Assert.True(fs.IsDurable(CrashStores.BlockPath(2)), "the new block's entry and content must be durable");

            fs.Crash(new Random(seed));
            store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
            for (ulong s = 1; s <= r.Seq; s++)
            {
                Assert.Equal(Payload, store.LoadMsg(s)!.Data.ToArray());
            }

            Assert.True(store.StoreMsg("rot", default, Payload).Seq > r.Seq);
        }
    }

    [Fact]
    public void DirectoryIsSyncedAfterCreatingAndDeletingBlocksAndIndexes()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
        StoreResult r = default;
        while (store.BlockPaths.Count < 4)
        {
            r = store.StoreMsg("d", default, Payload);
        }

        r.Durable.Wait();
        for (var id = 1; id <= 3; id++)
        {
            Assert.True(fs.IsDurable(CrashStores.BlockPath(id)));
            Assert.True(fs.IsEntryDurable(Path.ChangeExtension(CrashStores.BlockPath(id), ".idx")), "sealed block index entry");
        }
        // Remove everything in blocks 1 and 2: both are deleted by the background pass.
        for (ulong s = 1; s <= r.Seq; s++)
        {
            if (store.LoadMsg(s) is { } m && s < r.Seq - 1)
            {
                store.RemoveMsg(s);
            }
        }
        store.FlushAllPending(); // runs the block removal / compaction pass
        store.WhenDurable().Wait();
        Assert.True(fs.IsDurablyGone(CrashStores.BlockPath(1)), "a deleted block's entry must be durably gone");
        Assert.True(fs.IsDurablyGone(Path.ChangeExtension(CrashStores.BlockPath(1), ".idx")));
        Assert.Contains(fs.Log, e => e.Op == "syncdir");
    }

    [Fact]
    public void CompactionNeverBringsBackADeletedMessageWhereverThePowerFails()
    {
        // Crash at every single file operation of the compaction pass, with several ways the
        // unsynced state can be lost at each point.
        for (var freezeAt = 0; ; freezeAt++)
        {
            var completed = false;
            for (var seed = 0; seed < 4; seed++)
            {
                var fs = new CrashFileSystem();
                var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
                var live = new Dictionary<ulong, byte[]>();
                for (var i = 0; i < 40; i++)
                {
                    var data = Encoding.UTF8.GetBytes($"message {i} " + new string('x', i * 3));
                    live[store.StoreMsg($"c.{i % 3}", default, data).Seq] = data;
                }
                var removed = new List<ulong>();
                foreach (var s in live.Keys.Where(s => s % 4 != 0 || s < 12).ToArray())
                {
                    store.RemoveMsg(s);
                    live.Remove(s);
                    removed.Add(s);
                }
                store.WhenDurable().Wait(); // the removals are acknowledged
                fs.FreezeAfter(freezeAt);
                try
                {
                    store.FlushAllPending(); // deletes empty blocks, rewrites sparse ones
                    store.StoreMsg("after", default, Payload);
                    store.WhenDurable().Wait();
                    completed = !fs.Frozen;
                }
                catch (Exception) when (fs.Frozen)
                {
                }
                fs.Crash(new Random(seed * 1000 + freezeAt));
                var recovered = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
                foreach (var s in removed)
                {
                    Assert.Null(recovered.LoadMsg(s));
                }

                foreach (var (s, data) in live)
                {
                    Assert.Equal(data, recovered.LoadMsg(s)!.Data.ToArray());
                }

                recovered.Stop();
            }
            if (completed)
            {
                return; // the pass finished before the power failed: every point was covered
            }

            Assert.True(freezeAt < 10_000);
        }
    }

    [Fact]
    public void SequencesAreNeverReusedWhenACrashCutsTheTailAtARecordBoundary()
    {
        foreach (var reserve in new ulong[] { 4, 10_000 })
        {
            var fs = new CrashFileSystem();
            var store = CrashStores.Open(CrashStores.Options(fs, reserve: reserve));
            for (var i = 0; i < 10; i++)
            {
                store.StoreMsg("s", default, Payload);
            }

            store.WhenDurable().Wait();
            ulong handedOut = 0;
            using (fs.HoldSyncs(".blk")) // writes go on, but no block reaches the disk from here on
            {
                for (var i = 0; i < 30; i++)
                {
                    handedOut = store.StoreMsg("s", default, Payload).Seq;
                }

                fs.Crash(new Random(7), dropAllUnsynced: true); // the unsynced tail vanishes at a record boundary
            }
            store = CrashStores.Open(CrashStores.Options(fs, reserve: reserve));
            Assert.True(store.State().LastSeq >= 10);
            var next = store.StoreMsg("s", default, Payload).Seq;
            Assert.True(next > handedOut, $"reserve {reserve}: sequence {next} reused (handed out up to {handedOut})");
        }
    }

    [Fact]
    public void TheLastSequenceSurvivesAPurgeOfEverything()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
        for (var i = 0; i < 50; i++)
        {
            store.StoreMsg("p", default, Payload);
        }

        store.Purge();
        store.FlushAllPending();
        store.WhenDurable().Wait();
        fs.Crash(new Random(3));
        store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1024));
        Assert.Equal(0UL, store.State().Msgs);
        Assert.True(store.State().LastSeq >= 50);
        Assert.True(store.StoreMsg("p", default, Payload).Seq > 50);
    }
}
