using System.Formats.Tar;
using System.IO.Compression;
using Nats.Storage.Tests.Consumers;

namespace Nats.Storage.Tests.Snapshots;

/// <summary>Snapshot of a stream with its consumers, restored into either engine.</summary>
public sealed class SnapshotTests
{
    public static TheoryData<string, string> Pairs => new()
    {
        { "memory", "memory" }, { "memory", "file" }, { "file", "file" }, { "file", "memory" },
    };

    [Theory, MemberData(nameof(Pairs))]
    public void RestoresMessagesSequencesTtlsAndConsumers(string from, string to)
    {
        var clock = new ManualClock();
        using var src = new StoreHarness(from, new StoreConfig { Name = "SNAP", MaxAge = TimeSpan.FromHours(1) }, blockSize: 2048, clock: clock);
        for (var i = 0; i < 500; i++)
        {
            var ttl = i == 250 ? 60 : i == 251 ? -1 : 0;
            src.Store.StoreMsg($"snap.{i % 7}", i % 3 == 0 ? Bytes.Of("NATS/1.0\r\nk: v\r\n\r\n") : default, Bytes.Of($"payload {i}"), ttl);
            clock.Advance(TimeSpan.FromMilliseconds(3));
        }
        src.Store.Compact(11);                 // first sequence 11
        for (ulong s = 100; s < 140; s++)
        {
            src.Store.RemoveMsg(s);            // a hole
        }

        src.Store.SkipMsgs(501, 5);            // trailing sequences without messages
        var c = src.Store.ConsumerStore("DUR", new ConsumerStoreConfig { MaxDeliver = 5, Metadata = Bytes.Of("{\"durable_name\":\"DUR\"}") });
        for (ulong i = 1; i <= 20; i++)
        {
            c.UpdateDelivered(i, i + 10, 1, 1_700_000_000_123_456_789 + (long)i);
        }

        c.UpdateAcks(1, 11);
        c.UpdateDelivered(21, 13, 2, 42);
        src.Store.ConsumerStore("EPH", new ConsumerStoreConfig { AckPolicy = AckPolicy.None }).UpdateDelivered(1, 300, 1, 7);

        var archive = new MemoryStream();
        var taken = src.Store.Snapshot(archive, includeConsumers: true);
        var expected = src.Store.State();
        Assert.Equal(expected.Msgs, taken.State.Msgs);
        Assert.Equal(2, taken.Consumers);
        Assert.Contains("stream.json", ListEntries(archive)); // plain tar.gz

        using var dst = new StoreHarness(to, new StoreConfig { Name = "SNAP", MaxAge = TimeSpan.FromHours(1) }, blockSize: 2048, clock: clock);
        archive.Position = 0;
        var restored = StreamSnapshot.Restore(archive, dst.Store);
        Assert.Equal(2, restored.Consumers);
        foreach (var store in dst.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal((expected.Msgs, expected.FirstSeq, expected.LastSeq, expected.NumDeleted, expected.NumSubjects, expected.FirstTime),
                (st.Msgs, st.FirstSeq, st.LastSeq, st.NumDeleted, st.NumSubjects, st.FirstTime));
            if (from == to)
            {
                Assert.Equal(expected.Bytes, st.Bytes);
            }

            var a = new StoredMessage();
            var b = new StoredMessage();
            for (ulong s = 1; s <= 510; s++)
            {
                var sa = src.Store.TryLoadMsg(s, a);
                Assert.Equal(sa, store.TryLoadMsg(s, b));
                if (sa != LoadStatus.Found)
                {
                    continue;
                }

                Assert.Equal((a.Subject, a.Timestamp), (b.Subject, b.Timestamp));
                Assert.Equal(a.Header.ToArray(), b.Header.ToArray());
                Assert.Equal(a.Data.ToArray(), b.Data.ToArray());
            }
            Assert.Equal(["DUR", "EPH"], store.ConsumerNames());
            var rc = store.ConsumerStore("DUR");
            Assert.Equal(5, rc.Config.MaxDeliver);
            Assert.Equal(Bytes.Of("{\"durable_name\":\"DUR\"}"), rc.Config.Metadata);
            ConsumerStoreTests.AssertSame(c.State(), rc.State());
            Assert.Equal(AckPolicy.None, store.ConsumerStore("EPH").Config.AckPolicy);
        }
        // Per-message TTLs came along: 261 expires after its minute, 262 ("never") outlives MaxAge.
        clock.Advance(TimeSpan.FromMinutes(2));
        dst.Store.ExpireMessages();
        Assert.Equal(LoadStatus.NotFound, dst.Store.TryLoadMsg(251, new StoredMessage()));
        clock.Advance(TimeSpan.FromHours(2));
        dst.Store.ExpireMessages();
        Assert.Equal(1UL, dst.Store.State().Msgs);
        Assert.Equal(252UL, dst.Store.State().FirstSeq);
        // New messages continue the sequence.
        Assert.Equal(506UL, dst.Store.StoreMsg("after", default, Bytes.Of("x")).Seq);
    }

    [Theory]
    [InlineData("memory")]
    [InlineData("file")]
    public void RefusesDamagedOrTruncatedArchivesAndNonEmptyTargets(string kind)
    {
        using var src = new StoreHarness(kind);
        for (var i = 0; i < 50; i++)
        {
            src.Store.StoreMsg("d", default, Bytes.Of($"m{i}"));
        }

        var archive = new MemoryStream();
        src.Store.Snapshot(archive, includeConsumers: false);
        var bytes = archive.ToArray();

        using (var target = new StoreHarness(kind))
        {
            target.Store.StoreMsg("x", default, default);
            Assert.Throws<StoreException>(() => StreamSnapshot.Restore(new MemoryStream(bytes), target.Store));
        }
        // Flip one byte of a message record inside the (uncompressed) tar, then recompress.
        var tar = Decompress(bytes);
        var at = tar.AsSpan().IndexOf(Bytes.Of("m17"));
        tar[at + 1] ^= 0x20;
        using (var target = new StoreHarness(kind))
        {
            Assert.Equal("snapshot message record is damaged",
                Assert.Throws<StoreException>(() => StreamSnapshot.Restore(new MemoryStream(Compress(tar)), target.Store)).Message);
        }
        // Cut before the manifest.
        using (var target = new StoreHarness(kind))
        {
            Assert.ThrowsAny<Exception>(() => StreamSnapshot.Restore(new MemoryStream(Compress(tar[..1536])), target.Store));
        }
    }

    private static List<string> ListEntries(MemoryStream archive)
    {
        archive.Position = 0;
        using var gz = new GZipStream(archive, CompressionMode.Decompress, leaveOpen: true);
        using var reader = new TarReader(gz, leaveOpen: true);
        var names = new List<string>();
        while (reader.GetNextEntry() is { } e)
        {
            names.Add(e.Name);
        }

        return names;
    }

    private static byte[] Decompress(byte[] gz)
    {
        using var output = new MemoryStream();
        using (var z = new GZipStream(new MemoryStream(gz), CompressionMode.Decompress))
        {
            z.CopyTo(output);
        }

        return output.ToArray();
    }

    private static byte[] Compress(byte[] raw)
    {
        using var output = new MemoryStream();
        using (var z = new GZipStream(output, CompressionLevel.Fastest, leaveOpen: true))
        {
            z.Write(raw);
        }

        return output.ToArray();
    }
}
