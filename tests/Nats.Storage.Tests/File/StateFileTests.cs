using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>A clean stop writes the stream state file and the next open reads it instead of replaying
/// every block; it is trusted only while the blocks it lists are still the ones it was taken from.</summary>
public sealed class StateFileTests
{
    private static (StoreHarness H, Dictionary<ulong, byte[]> Live) Fill(int n)
    {
        var h = new StoreHarness("file", blockSize: 8 * 1024) { IndexPageShift = 5, MaxIndexBytes = 1 };
        h.Reopen();
        var live = new Dictionary<ulong, byte[]>();
        for (var i = 0; i < n; i++)
        {
            var data = Bytes.Of($"m{i}");
            live[h.Store.StoreMsg($"s.{i % 5}", default, data).Seq] = data;
        }
        foreach (var seq in live.Keys.Where(s => s % 9 == 4).ToArray())
        {
            h.Store.RemoveMsg(seq);
            live.Remove(seq);
        }
        return (h, live);
    }

    private static void Check(IStreamStore store, Dictionary<ulong, byte[]> live)
    {
        var sm = new StoredMessage();
        Assert.Equal((ulong)live.Count, store.State().Msgs);
        foreach (var (seq, data) in live)
        {
            Assert.Equal(data, store.LoadMsg(seq, sm)!.Data.ToArray());
        }
        Assert.Equal((ulong)live.Keys.Count(s => (s - 1) % 5 == 2), store.FilteredState(1, "s.2").Msgs);
        Assert.Equal(live.Keys.Where(s => (s - 1) % 5 == 3).Max(), store.LoadLastMsg("s.3", sm)!.Sequence);
    }

    [Fact]
    public void CleanRestartReadsTheStateFileAndAnswersAlike()
    {
        var (h, live) = Fill(3000);
        using (h)
        {
            var store = (FileStore)h.Reopen();
            Assert.True(store.OpenedFromState);
            Assert.Equal(0, store.IndexPageLoads);
            Check(store, live);
            // Changes after a state-file open, then a reopen.
            var more = h.Store.StoreMsg("s.1", default, Bytes.Of("late"));
            live[more.Seq] = Bytes.Of("late");
            h.Store.RemoveMsg(live.Keys.Min());
            live.Remove(live.Keys.Min());
            store = (FileStore)h.Reopen();
            Assert.True(store.OpenedFromState);
            Check(store, live);
        }
    }

    [Theory]
    [InlineData("damaged")]
    [InlineData("stale")]
    [InlineData("block grew")]
    public void AStateFileThatDoesNotDescribeTheStoreIsNotTrusted(string how)
    {
        var (h, live) = Fill(2000);
        using (h)
        {
            var dir = h.Directory;
            var state = Path.Combine(dir, "index.db");
            h.Store.Stop();
            Assert.True(System.IO.File.Exists(state));
            switch (how)
            {
                case "damaged":
                    var bytes = System.IO.File.ReadAllBytes(state);
                    bytes[bytes.Length / 3] ^= 1;
                    System.IO.File.WriteAllBytes(state, bytes);
                    break;
                case "stale":
                    {
                        // A state from an earlier clean stop, put back after later removals.
                        var old = System.IO.File.ReadAllBytes(state);
                        var s = h.Create();
                        foreach (var seq in live.Keys.Where(q => q % 4 == 0).ToArray())
                        {
                            s.RemoveMsg(seq);
                            live.Remove(seq);
                        }
                        s.Stop();
                        System.IO.File.WriteAllBytes(state, old);
                        break;
                    }
                case "block grew":
                    {
                        var blk = Directory.GetFiles(Path.Combine(dir, "msgs"), "*.blk").Order().First();
                        using var f = new FileStream(blk, FileMode.Append);
                        f.Write(new byte[16]);
                        break;
                    }
            }
            var store = (FileStore)h.Create();
            try
            {
                // "stale": same last sequence and a clean stop; the block list tells them apart (the block
                // of tombstones it lists was compacted away since).
                Assert.False(store.OpenedFromState);
                Check(store, live);
            }
            finally
            {
                store.Stop();
            }
        }
    }

    [Fact]
    public void AStoreWithMessageTtlsIsReplayedInFull()
    {
        var (h, live) = Fill(500);
        using (h)
        {
            var r = h.Store.StoreMsg("s.0", default, Bytes.Of("ttl"), ttl: 3600);
            live[r.Seq] = Bytes.Of("ttl");
            var store = (FileStore)h.Reopen();
            Assert.False(store.OpenedFromState);
            Assert.False(System.IO.File.Exists(Path.Combine(h.Directory, "index.db")));
            Check(store, live);
        }
    }
}
