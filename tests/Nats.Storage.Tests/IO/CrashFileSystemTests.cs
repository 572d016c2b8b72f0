using Nats.Storage.IO;

namespace Nats.Storage.Tests.IO;

/// <summary>The power-loss simulator itself: synced state always survives, unsynced state may not.</summary>
public sealed class CrashFileSystemTests
{
    [Fact]
    public void SyncedContentAndEntriesSurviveUnsyncedOnesMayNot()
    {
        var sawLoss = false;
        var sawKeep = false;
        for (var seed = 0; seed < 64; seed++)
        {
            var fs = new CrashFileSystem(pageSize: 16);
            fs.CreateDirectory("/d");
            using (var f = fs.Open("/d/a", StoreFileMode.Create))
            {
                f.Write(new byte[40].AsSpan(), 0);
                f.Write(Enumerable.Repeat((byte)1, 40).ToArray(), 0);
                f.Sync();
                f.Write(Enumerable.Repeat((byte)2, 40).ToArray(), 40);
            }
            fs.SyncDirectory("/d");
            using (var f = fs.Open("/d/b", StoreFileMode.Create))
            {
                f.Write(Enumerable.Repeat((byte)3, 10).ToArray(), 0);
                f.Sync(); // content durable, directory entry not
            }
            fs.Crash(new Random(seed));

            using var a = fs.Open("/d/a", StoreFileMode.Open);
            var bytes = a.ReadAll();
            Assert.InRange(bytes.Length, 40, 80);
            Assert.All(bytes[..40], b => Assert.Equal(1, b));
            Assert.All(bytes[40..], b => Assert.True(b is 0 or 2));
            if (bytes.Length == 80 && bytes[79] == 2)
            {
                sawKeep = true;
            }

            if (bytes.Length == 40 || !fs.FileExists("/d/b"))
            {
                sawLoss = true;
            }
        }
        Assert.True(sawLoss && sawKeep, "crashes must sometimes keep and sometimes drop unsynced state");
    }

    [Fact]
    public void HandlesOfTheCrashedProcessFailAndFreezeStopsOperations()
    {
        var fs = new CrashFileSystem();
        fs.CreateDirectory("/d");
        var f = fs.Open("/d/a", StoreFileMode.Create);
        fs.FreezeAfter(1);
        f.Write([1], 0);
        Assert.Throws<IOException>(() => f.Sync());
        fs.Crash(new Random(1));
        Assert.Throws<IOException>(() => f.Write([1], 0));
        Assert.False(fs.FileExists("/d/a")); // created, never made durable by a directory sync
    }

    [Fact]
    public void DropAllUnsyncedCutsFilesWhereTheyWereSynced()
    {
        var fs = new CrashFileSystem();
        fs.CreateDirectory("/d");
        using (var f = fs.Open("/d/a", StoreFileMode.Create))
        {
            f.Write(new byte[100], 0);
            f.Sync();
            f.Write(new byte[1000], 100);
        }
        fs.SyncDirectory("/d");
        fs.Crash(new Random(0), dropAllUnsynced: true);
        using var again = fs.Open("/d/a", StoreFileMode.Open);
        Assert.Equal(100, again.Length);
    }
}
