using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>A cold read costs the record, not its block; a block read many times is read through
/// 256 KB windows of its file, never loaded whole.</summary>
public sealed class ColdReadTests
{
    [Fact]
    public void ColdReadsLoadOneRecordUntilABlockIsScanned()
    {
        using var h = new StoreHarness("file", blockSize: 64 * 1024) { MaxCachedBlocks = 2 };
        var payloads = new Dictionary<ulong, byte[]>();
        var rnd = new Random(3);
        for (var i = 0; i < 3000; i++)
        {
            var data = new byte[i % 50 == 0 ? 9000 : rnd.Next(1, 200)]; // some records span several pages
            rnd.NextBytes(data);
            payloads[h.Store.StoreMsg($"cold.{i % 9}", default, data).Seq] = data;
        }
        var store = (FileStore)h.Reopen();
        Assert.True(store.BlockPaths.Count > 5);
        var cachedAtOpen = store.CachedBlocks;
        var sm = new StoredMessage();
        foreach (var seq in new ulong[] { 1, 51, 700, 1201, 1950 })
        {
            Assert.Equal(payloads[seq], store.LoadMsg(seq, sm)!.Data.ToArray());
            Assert.Equal(cachedAtOpen, store.CachedBlocks); // read from the file, no block loaded
        }
        // Reading blocks in order, over and over: windows, no block loaded.
        for (var pass = 0; pass < 3; pass++)
        {
            for (ulong s = 2; s <= 1500; s++)
            {
                Assert.Equal(payloads[s], store.LoadMsg(s, sm)!.Data.ToArray());
            }
        }

        Assert.Equal(cachedAtOpen, store.CachedBlocks);
        Assert.True(store.ReadWindowsHeld);
        // Every message still reads back exactly, cached or not.
        foreach (var (seq, data) in payloads)
        {
            Assert.Equal(data, store.LoadMsg(seq, sm)!.Data.ToArray());
        }
    }
}
