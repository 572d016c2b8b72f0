using System.Text;
using Nats.Storage.File;
using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests;

/// <summary>Idle block caches are dropped (sealed blocks' and the active block's buffer), and the store
/// serves and appends exactly as before: the active block's bytes come back before the next write.</summary>
public sealed class CacheExpiryTests
{
    [Fact]
    public void IdleCachesAreDroppedAndTheStoreKeepsWorking()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 512));
        for (var i = 0; i < 40; i++)
        {
            store.StoreMsg($"s.{i}", default, Encoding.UTF8.GetBytes($"payload {i}"));
        }
        Assert.Equal($"payload 1", Encoding.UTF8.GetString(store.LoadMsg(2, null)!.Data.Span));
        Assert.True(store.CachedBlocks > 0);

        store.ExpireCaches(); // used since the last look: kept
        Assert.True(store.CachedBlocks > 0);
        store.ExpireCaches(); // a whole period unused: dropped, the active block's buffer too
        Assert.Equal(0, store.CachedBlocks);

        for (var i = 0; i < 40; i++)
        {
            Assert.Equal($"payload {i}", Encoding.UTF8.GetString(store.LoadMsg((ulong)i + 1, null)!.Data.Span));
        }
        // Appending to the active block after its buffer went: earlier records in it survive, also a rotation.
        for (var i = 40; i < 80; i++)
        {
            store.StoreMsg($"s.{i}", default, Encoding.UTF8.GetBytes($"payload {i}"));
            if (i % 7 == 0)
            {
                store.ExpireCaches();
                store.ExpireCaches();
            }
        }
        store.Stop();
        var reopened = CrashStores.Open(CrashStores.Options(fs, blockSize: 512));
        Assert.Equal(80UL, reopened.State().Msgs);
        for (var i = 0; i < 80; i++)
        {
            Assert.Equal($"payload {i}", Encoding.UTF8.GetString(reopened.LoadMsg((ulong)i + 1, null)!.Data.Span));
        }
        reopened.Stop();
    }

    [Fact]
    public void IdleIndexChunksAreEvictedAndRebuiltWhenRead()
    {
        var fs = new CrashFileSystem();
        // 64 sequences a chunk, a budget far above what the test fills: only the expiry tick evicts.
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 4096, indexPageShift: 6));
        for (var i = 0; i < 1000; i++)
        {
            store.StoreMsg($"s.{i % 9}", default, Encoding.UTF8.GetBytes($"payload {i}"));
        }
        Assert.True(store.IndexChunks > 10, $"{store.IndexChunks} chunks resident");

        store.ExpireCaches(); // filled since the last look: kept
        Assert.True(store.IndexChunks > 10);
        Assert.Equal("payload 10", Encoding.UTF8.GetString(store.LoadMsg(11, null)!.Data.Span));
        store.ExpireCaches(); // a period unused: only the newest chunk and the one just read stay
        Assert.Equal(2, store.IndexChunks);
        store.ExpireCaches();
        Assert.Equal(1, store.IndexChunks);

        var loads = store.IndexPageLoads;
        for (var i = 0; i < 1000; i++)
        {
            Assert.Equal($"payload {i}", Encoding.UTF8.GetString(store.LoadMsg((ulong)i + 1, null)!.Data.Span));
        }
        Assert.True(store.IndexPageLoads >= loads + 15, $"{store.IndexPageLoads - loads} page loads");
        Assert.Equal(1000UL / 9 + 1, store.FilteredState(1, "s.0").Msgs);
        store.ExpireCaches();
        store.ExpireCaches();
        Assert.Equal(1, store.IndexChunks);
        store.Stop();
    }
}
