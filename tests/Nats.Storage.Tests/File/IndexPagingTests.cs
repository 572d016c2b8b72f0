using Nats.Storage.Core;
using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>Cold index chunks leave memory and are rebuilt from block indexes (or from the blocks when an
/// index is missing or damaged); answers never change, and the index stays within its budget.</summary>
public sealed class IndexPagingTests
{
    private const int Messages = 20_000;

    // A quarter of what a resident index of every slot would hold (32 bytes a sequence).
    private const long IndexBound = Messages * 32 / 4;

    [Theory]
    [InlineData("intact")]
    [InlineData("indexes deleted")]
    [InlineData("indexes damaged")]
    [InlineData("seal summaries only")]
    public void EvictedChunksAreRebuiltExactly(string damage)
    {
        using var h = new StoreHarness("file", blockSize: 16 * 1024) { IndexPageShift = 6, MaxIndexBytes = 1, BlockIndexes = damage != "seal summaries only" };
        h.Reopen(); // the harness opened its first store before the options above were set
        var payloads = new Dictionary<ulong, (string Subject, byte[] Data)>();
        var rnd = new Random(11);
        for (var i = 0; i < Messages; i++)
        {
            var data = new byte[rnd.Next(1, 40)];
            rnd.NextBytes(data);
            var subject = $"page.{i % 17}";
            payloads[h.Store.StoreMsg(subject, default, data).Seq] = (subject, data);
        }
        // Removals scattered over every chunk, so evicted chunks carry live maps and empty-slot times.
        foreach (var seq in payloads.Keys.Where(s => s % 7 == 3).ToArray())
        {
            Assert.True(h.Store.RemoveMsg(seq));
            payloads.Remove(seq);
        }

        var store = (FileStore)h.Store;
        store.State();
        Assert.True(((StoreCore)store).IndexBytes < IndexBound, $"index holds {((StoreCore)store).IndexBytes} bytes ({((StoreCore)store).IndexChunks} chunks resident)");
        var msgs = Directory.GetFiles(Path.Combine(h.Directory, "msgs"));
        // Sealed blocks carry a per-message index, or (the default) a 36-byte seal summary that no rebuild can use.
        var sidecars = msgs.Where(p => p.EndsWith(".idx", StringComparison.Ordinal)).Select(p => new FileInfo(p).Length).ToList();
        Assert.NotEmpty(sidecars);
        Assert.Equal(damage == "seal summaries only", sidecars.All(n => n == 36));
        foreach (var idx in msgs.Where(p => p.EndsWith(".idx", StringComparison.Ordinal)))
        {
            if (damage == "indexes deleted")
            {
                System.IO.File.Delete(idx);
            }
            else if (damage == "indexes damaged")
            {
                var bytes = System.IO.File.ReadAllBytes(idx);
                bytes[bytes.Length / 2] ^= 0x5A;
                System.IO.File.WriteAllBytes(idx, bytes);
            }
        }

        var loadsBefore = store.IndexPageLoads;
        Check(store, payloads);
        Assert.True(store.IndexPageLoads > loadsBefore + 100, $"{store.IndexPageLoads - loadsBefore} page loads");
        Assert.Empty(h.Warnings);

        // The same after a restart (recovery rebuilds what it cannot trust and pages as it goes).
        store = (FileStore)h.Reopen();
        Assert.True(((StoreCore)store).IndexBytes < IndexBound, $"index holds {((StoreCore)store).IndexBytes} bytes after reopen");
        Check(store, payloads);
    }

    private static void Check(FileStore store, Dictionary<ulong, (string Subject, byte[] Data)> payloads)
    {
        var sm = new StoredMessage();
        // Backwards, then forwards with a filter: every chunk is rebuilt more than once.
        foreach (var seq in payloads.Keys.OrderDescending())
        {
            var m = store.LoadMsg(seq, sm)!;
            Assert.Equal(payloads[seq].Subject, m.Subject);
            Assert.Equal(payloads[seq].Data, m.Data.ToArray());
        }
        ulong next = 1;
        var seen = 0;
        while (store.LoadNextMsg("page.3", next, sm) is { } m)
        {
            Assert.Equal("page.3", payloads[m.Sequence].Subject);
            next = m.Sequence + 1;
            seen++;
        }
        Assert.Equal(payloads.Values.Count(p => p.Subject == "page.3"), seen);
        var state = store.State();
        Assert.Equal((ulong)payloads.Count, state.Msgs);
        Assert.Equal(payloads.Keys.Min(), state.FirstSeq);
        Assert.Equal((ulong)payloads.Values.Count(p => p.Subject == "page.5"), store.FilteredState(1, "page.5").Msgs);
        Assert.Equal(payloads.Keys.Where(s => payloads[s].Subject == "page.16").Max(), store.LoadLastMsg("page.16", sm)!.Sequence);
    }
}
