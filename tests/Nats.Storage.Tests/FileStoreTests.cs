using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>File-engine specifics: block rotation, sidecar indexes, deletion and compaction of blocks,
/// write modes.</summary>
public sealed class FileStoreTests
{
    private static readonly byte[] Payload = new byte[100];

    private static long BlockBytes(string dir) => Directory.GetFiles(Path.Combine(dir, "msgs"), "*.blk").Sum(f => new FileInfo(f).Length);

    private static int BlockCount(string dir) => Directory.GetFiles(Path.Combine(dir, "msgs"), "*.blk").Length;

    [Fact]
    public void RotatesBlocksAndIndexesSealedOnes()
    {
        using var h = new StoreHarness("file", blockSize: 2048);
        for (var i = 0; i < 200; i++)
        {
            h.Store.StoreMsg("r", default, Payload);
        }

        Assert.True(BlockCount(h.Directory) >= 10);
        h.Store.Stop();
        var blocks = Directory.GetFiles(Path.Combine(h.Directory, "msgs"), "*.blk");
        Assert.All(blocks, b => Assert.True(System.IO.File.Exists(Path.ChangeExtension(b, ".idx")), $"{b} has no index"));
        var reopened = h.Create();
        Assert.Equal(200UL, reopened.State().Msgs);
        Assert.Equal(200UL, reopened.LoadMsg(200)!.Sequence);
        reopened.Stop();
    }

    [Fact]
    public void EmptiedBlocksAreDeletedAndSparseOnesCompacted()
    {
        using var h = new StoreHarness("file", blockSize: 4096);
        for (var i = 0; i < 1000; i++)
        {
            h.Store.StoreMsg($"c.{i % 10}", default, Payload);
        }

        var before = BlockBytes(h.Directory);
        h.Store.Compact(301);                     // the first ~30% of blocks become empty
        for (ulong s = 301; s <= 900; s++)
        {
            if (s % 5 != 0)
            {
                h.Store.RemoveMsg(s);             // 80% removed from the middle blocks
            }
        }
        h.Store.FlushAllPending();
        var after = BlockBytes(h.Directory);
        Assert.True(after < before / 2, $"blocks should shrink: {before} -> {after}");

        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal(120UL + 100, st.Msgs);
            Assert.Equal(305UL, st.FirstSeq);
            for (ulong s = 301; s <= 1000; s++)
            {
                Assert.Equal(s > 900 || s % 5 == 0, store.LoadMsg(s) is not null);
            }

            Assert.Null(st.Lost);
        }
    }

    [Fact]
    public void RemovalsSurviveBlockDeletionOfTheirTombstones()
    {
        using var h = new StoreHarness("file", blockSize: 1024);
        for (var i = 0; i < 100; i++)
        {
            h.Store.StoreMsg("t", default, Payload);
        }

        h.Store.RemoveMsg(50);                    // tombstone lands in the block holding message ~100
        for (var i = 0; i < 100; i++)
        {
            h.Store.StoreMsg("u", default, Payload);
        }

        for (ulong s = 90; s <= 200; s++)
        {
            h.Store.RemoveMsg(s);                 // empties the tombstone's block, which gets deleted
        }

        h.Store.FlushAllPending();
        var store = h.Reopen();
        Assert.Null(store.LoadMsg(50));
        Assert.Equal(88UL, store.State().Msgs);
    }

    [Theory]
    [InlineData(nameof(FileWriteMode.WriteThrough), nameof(FileSyncMode.GroupCommit))]
    [InlineData(nameof(FileWriteMode.Buffered), nameof(FileSyncMode.GroupCommit))]
    [InlineData(nameof(FileWriteMode.WriteThrough), nameof(FileSyncMode.Interval))]
    [InlineData(nameof(FileWriteMode.Buffered), nameof(FileSyncMode.Interval))]
    [InlineData(nameof(FileWriteMode.WriteThrough), nameof(FileSyncMode.Always))]
    [InlineData(nameof(FileWriteMode.BufferedMessages), nameof(FileSyncMode.GroupCommit))]
    [InlineData(nameof(FileWriteMode.BufferedMessages), nameof(FileSyncMode.Interval))]
    public void WriteModesPersist(string modeName, string syncName)
    {
        var mode = Enum.Parse<FileWriteMode>(modeName);
        var sync = Enum.Parse<FileSyncMode>(syncName);
        using var dir = new TempDir();
        var opts = new FileStoreOptions { Directory = dir.Path, WriteMode = mode, SyncMode = sync, BlockSize = 4096 };
        var store = StreamStores.OpenFile(new StoreConfig(), opts);
        for (var i = 0; i < 300; i++)
        {
            store.StoreMsg("w", default, Payload);
        }

        store.FlushAllPending();
        var onDisk = BlockBytes(dir.Path);
        Assert.True(onDisk >= 300 * Payload.Length, "flushed data must be in the files");
        store.Stop();
        store = StreamStores.OpenFile(new StoreConfig(), opts);
        Assert.Equal(300UL, store.State().Msgs);
        store.Stop();
    }

    [Fact]
    public void BufferedMessagesHoldAppendsUntilAFlushButWriteRemovalsThrough()
    {
        using var dir = new TempDir();
        var opts = new FileStoreOptions
        {
            Directory = dir.Path,
            WriteMode = FileWriteMode.BufferedMessages,
            SyncMode = FileSyncMode.Interval,
            FlushDelay = TimeSpan.FromHours(1), // only explicit flushes in this test
        };
        var store = StreamStores.OpenFile(new StoreConfig(), opts);
        for (var i = 0; i < 20; i++)
        {
            store.StoreMsg("b", default, Payload);
        }

        Assert.Equal(0, BlockBytes(dir.Path));
        store.FlushAllPending();
        var flushed = BlockBytes(dir.Path);
        Assert.True(flushed >= 20 * Payload.Length);
        Assert.True(store.RemoveMsg(5));
        Assert.True(BlockBytes(dir.Path) > flushed, "a removal is written through");
        store.Stop();
        store = StreamStores.OpenFile(new StoreConfig(), opts);
        Assert.Equal(19UL, store.State().Msgs);
        Assert.Null(store.LoadMsg(5));
        store.Stop();
    }

    [Fact]
    public void IntervalSyncRunsBesidePublishing()
    {
        using var h = new StoreHarness("file", blockSize: 2048);
        var store = (FileStore)h.Store;
        for (var i = 0; i < 100; i++)
        {
            store.StoreMsg("sync", default, Payload);
            if (i % 10 == 0)
            {
                store.SyncNow();
            }
        }
        h.Store.RemoveMsg(3);
        store.SyncNow();
        Assert.Equal(99UL, h.Reopen().State().Msgs);
    }

    [Fact]
    public void DeleteRemovesEverything()
    {
        using var dir = new TempDir();
        var store = StreamStores.OpenFile(new StoreConfig(), new FileStoreOptions { Directory = Path.Combine(dir.Path, "s") });
        store.StoreMsg("x", default, Payload);
        store.Delete();
        Assert.False(Directory.Exists(Path.Combine(dir.Path, "s")));
    }
}
