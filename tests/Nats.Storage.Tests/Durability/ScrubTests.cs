using System.Text;
using Nats.Storage.File;

namespace Nats.Storage.Tests.Durability;

/// <summary>Bit rot in sealed blocks: found by the scrub or by verify-on-open, reported with block and
/// sequence, counted, and the store stays usable.</summary>
public sealed class ScrubTests
{
    private static byte[] Data(int i) => Encoding.UTF8.GetBytes($"payload {i} " + new string('z', 60));

    private static (FileStoreOptions Options, List<StoreDamage> Damage) Setup(TempDir dir, bool verifyOnOpen = false)
    {
        var damage = new List<StoreDamage>();
        return (new FileStoreOptions
        {
            Directory = dir.Path,
            BlockSize = 1024,
            VerifyOnOpen = verifyOnOpen,
            Damaged = d => { lock (damage) { damage.Add(d); } },
        }, damage);
    }

    private static void Fill(IStreamStore store)
    {
        for (var i = 1; i <= 60; i++)
        {
            store.StoreMsg("scrub", default, Data(i)).Durable.Wait();
        }
    }

    /// <summary>Flips a byte inside the payload of the first message of block 2.</summary>
    private static void Rot(TempDir dir)
    {
        var path = Path.Combine(dir.Path, "msgs", $"{2:D10}.blk");
        var bytes = System.IO.File.ReadAllBytes(path);
        bytes[RecordCodec.FixedSize + "scrub".Length + 3] ^= 0x40;
        System.IO.File.WriteAllBytes(path, bytes);
    }

    [Fact]
    public void ScrubFindsRotInABlockNobodyReadsAndTheStoreStaysUsable()
    {
        using var dir = new TempDir();
        var (options, damage) = Setup(dir);
        var store = (FileStore)StreamStores.OpenFile(new StoreConfig(), options);
        Fill(store);
        Assert.True(store.BlockPaths.Count >= 4);
        Assert.Equal(0, store.ScrubNow());
        Rot(dir);

        Assert.Equal(1, store.ScrubNow());
        var d = Assert.Single(damage);
        Assert.Equal(2, d.Block);
        Assert.True(d.FirstSeq > 1 && d.FirstSeq == d.LastSeq);
        Assert.Null(store.LoadMsg(d.FirstSeq));
        Assert.Equal(1UL, store.State().Lost!.Count);
        for (ulong s = 1; s <= 60; s++)
        {
            if (s != d.FirstSeq)
            {
                Assert.Equal(Data((int)s), store.LoadMsg(s)!.Data.ToArray());
            }
        }
        var next = store.StoreMsg("scrub", default, Data(61));
        next.Durable.Wait();
        Assert.Equal(0, store.ScrubNow()); // the block was repaired: reported once
        store.Stop();

        var reopened = StreamStores.OpenFile(new StoreConfig(), options with { VerifyOnOpen = true });
        Assert.Single(damage);
        Assert.Equal(60UL, reopened.State().Msgs); // 60 stored, one lost to the rot, one more stored
        Assert.Equal(Data(61), reopened.LoadMsg(next.Seq)!.Data.ToArray());
        reopened.Stop();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void VerifyOnOpenReportsRotBehindAValidIndex(bool verify)
    {
        using var dir = new TempDir();
        var (options, damage) = Setup(dir, verify);
        var store = StreamStores.OpenFile(new StoreConfig(), options);
        Fill(store);
        store.Stop();
        Rot(dir);

        store = StreamStores.OpenFile(new StoreConfig(), options);
        if (verify)
        {
            var d = Assert.Single(damage);
            Assert.Equal(2, d.Block);
            Assert.Equal(59UL, store.State().Msgs);
        }
        else
        {
            Assert.Empty(damage); // the index was trusted; the rot is found on read (or by a scrub)
            Assert.Equal(60UL, store.State().Msgs);
        }
        store.Stop();
    }
}
