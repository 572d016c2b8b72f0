namespace Nats.Storage.Tests.Consumers;

/// <summary>The consumer store contract (Go's ConsumerStore and consumerMemStore rules) against both
/// engines; the file engine is also checked after stopping and reopening its stream.</summary>
public sealed class ConsumerStoreTests
{
    private static readonly ConsumerStoreConfig Explicit = new() { AckPolicy = AckPolicy.Explicit, Metadata = Bytes.Of("{\"durable_name\":\"C\"}") };

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void ExplicitAcksMoveTheFloorOverContiguousAcks(string kind)
    {
        using var h = new StoreHarness(kind);
        var c = h.Store.ConsumerStore("C", Explicit);
        Assert.False(c.HasState());
        for (ulong i = 1; i <= 5; i++)
        {
            c.UpdateDelivered(i, i, 1, (long)i * 1_000_000_123);
        }

        c.UpdateAcks(2, 2);
        Assert.Equal(new SequencePair(0, 0), c.State().AckFloor);
        c.UpdateAcks(1, 1);
        Assert.Equal(new SequencePair(2, 2), c.State().AckFloor);
        // Redelivery of 3 as consumer sequence 6: pending keeps the original consumer sequence.
        c.UpdateDelivered(6, 3, 2, 9_000_000_001);
        var st = c.State();
        Assert.Equal(new SequencePair(6, 5), st.Delivered);
        Assert.Equal(new PendingDelivery(3, 9_000_000_001), st.Pending[3]);
        Assert.Equal(1UL, st.Redelivered[3]);
        foreach (var store in h.NowAndReopened())
        {
            var r = store.ConsumerStore("C");
            Assert.True(r.HasState());
            Assert.Equal(Explicit.Metadata, r.Config.Metadata);
            AssertSame(st, r.State());
        }
        c = h.Store.ConsumerStore("C");
        c.UpdateAcks(6, 3);
        st = c.State();
        Assert.Equal(new SequencePair(3, 3), st.AckFloor);
        Assert.Empty(st.Redelivered);
        Assert.Equal(StoreError.MsgNotFound, Assert.Throws<StoreException>(() => c.UpdateAcks(7, 99)).Error);
        c.UpdateAcks(4, 4);
        c.UpdateAcks(5, 5);
        st = c.State();
        Assert.Empty(st.Pending);
        Assert.Equal(st.Delivered, st.AckFloor); // nothing pending: the floor is what was delivered
        foreach (var store in h.NowAndReopened())
        {
            AssertSame(st, store.ConsumerStore("C").State());
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void AckAllAckNoneAndMaxDeliver(string kind)
    {
        using var h = new StoreHarness(kind);
        var all = h.Store.ConsumerStore("ALL", new ConsumerStoreConfig { AckPolicy = AckPolicy.All });
        for (ulong i = 1; i <= 5; i++)
        {
            all.UpdateDelivered(i, i + 10, 1, 1);
        }

        all.UpdateAcks(3, 13);
        Assert.Equal(new SequencePair(3, 13), all.State().AckFloor);
        Assert.Equal([14UL, 15], all.State().Pending.Keys.Order().ToArray());

        var none = h.Store.ConsumerStore("NONE", new ConsumerStoreConfig { AckPolicy = AckPolicy.None });
        none.UpdateDelivered(1, 10, 1, 1);
        Assert.Equal(new SequencePair(1, 10), none.State().AckFloor);
        Assert.Empty(none.State().Pending);
        Assert.Equal("ack policy is none", Assert.Throws<StoreException>(() => none.UpdateAcks(1, 10)).Message);
        Assert.Equal(StoreError.NoAckPolicy, Assert.Throws<StoreException>(() => none.UpdateDelivered(2, 10, 2, 1)).Error);
        none.UpdateStarting(40);
        Assert.Equal(new SequencePair(1, 40), none.State().AckFloor);

        var max = h.Store.ConsumerStore("MAX", new ConsumerStoreConfig { MaxDeliver = 2 });
        max.SetStarting(99);
        max.UpdateDelivered(1, 100, 1, 1);
        max.UpdateDelivered(2, 100, 2, 2);
        Assert.True(max.State().Pending.ContainsKey(100));
        max.UpdateDelivered(3, 100, 3, 3);
        Assert.Empty(max.State().Pending);       // beyond MaxDeliver: no longer awaiting an ack
        Assert.Equal(2UL, max.State().Redelivered[100]);

        Assert.Equal(["ALL", "MAX", "NONE"], h.Store.ConsumerNames());
        var states = new[] { all.State(), none.State(), max.State() };
        h.Reopen();
        Assert.Equal(["ALL", "MAX", "NONE"], h.Store.ConsumerNames());
        AssertSame(states[0], h.Store.ConsumerStore("ALL").State());
        Assert.Equal(AckPolicy.None, h.Store.ConsumerStore("NONE").Config.AckPolicy);
        AssertSame(states[1], h.Store.ConsumerStore("NONE").State());
        Assert.Equal(2, h.Store.ConsumerStore("MAX").Config.MaxDeliver);
        AssertSame(states[2], h.Store.ConsumerStore("MAX").State());
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void UpdateReplacesValidStateOnly(string kind)
    {
        using var h = new StoreHarness(kind);
        var c = h.Store.ConsumerStore("U", Explicit);
        var good = new ConsumerState
        {
            Delivered = new SequencePair(10, 20),
            AckFloor = new SequencePair(5, 15),
            Pending = { [17] = new PendingDelivery(7, 123), [20] = new PendingDelivery(10, 456) },
            Redelivered = { [17] = 2 },
        };
        c.Update(good);
        AssertSame(good, c.State());
        Assert.Equal("bad ack floor for consumer", Assert.Throws<StoreException>(() => c.Update(new ConsumerState
        {
            Delivered = new SequencePair(1, 30),
            AckFloor = new SequencePair(2, 20),
        })).Message);
        Assert.Equal("bad pending entry, sequence [31] out of range", Assert.Throws<StoreException>(() => c.Update(new ConsumerState
        {
            Delivered = new SequencePair(11, 30),
            AckFloor = new SequencePair(5, 15),
            Pending = { [31] = new PendingDelivery(11, 1) },
        })).Message);
        Assert.Equal("old update ignored", Assert.Throws<StoreException>(() => c.Update(new ConsumerState
        {
            Delivered = new SequencePair(9, 20),
            AckFloor = new SequencePair(5, 15),
        })).Message);
        foreach (var store in h.NowAndReopened())
        {
            AssertSame(good, store.ConsumerStore("U").State());
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void RandomOperationsAgreeWithTheMemoryEngineAcrossReopens(string kind)
    {
        // 30,000 operations push the file engine's log past its compaction point several times.
        using var h = new StoreHarness(kind);
        var model = StreamStores.CreateMemory(new StoreConfig { Name = "M" }).ConsumerStore("C", Explicit);
        var c = h.Store.ConsumerStore("C", Explicit);
        var rnd = new Random(11);
        ulong dseq = 0, sseq = 0;
        var outstanding = new List<(ulong D, ulong S)>();
        for (var i = 0; i < 30_000; i++)
        {
            var roll = rnd.Next(100);
            if (roll < 50 || outstanding.Count == 0)
            {
                dseq++;
                sseq += (ulong)rnd.Next(1, 3);
                var ts = 1_700_000_000_000_000_000 + i * 1_234_567L;
                model.UpdateDelivered(dseq, sseq, 1, ts);
                c.UpdateDelivered(dseq, sseq, 1, ts);
                outstanding.Add((dseq, sseq));
            }
            else if (roll < 60)
            {
                var (_, s) = outstanding[rnd.Next(outstanding.Count)];
                dseq++;
                var dc = (ulong)rnd.Next(2, 5);
                model.UpdateDelivered(dseq, s, dc, i);
                c.UpdateDelivered(dseq, s, dc, i);
            }
            else
            {
                var k = rnd.Next(outstanding.Count);
                var (d, s) = outstanding[k];
                outstanding.RemoveAt(k);
                var expected = Record.Exception(() => model.UpdateAcks(d, s));
                var actual = Record.Exception(() => c.UpdateAcks(d, s));
                Assert.Equal(expected?.Message, actual?.Message);
            }
            if (i % 7_500 == 7_499)
            {
                AssertSame(model.State(), c.State());
                h.Reopen();
                c = h.Store.ConsumerStore("C", Explicit);
                AssertSame(model.State(), c.State());
            }
        }
        if (h.IsFile)
        {
            Assert.True(System.IO.File.Exists(Path.Combine(h.Directory, "obs", "C", "state.dat")), "the log was never compacted");
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public async Task ConcurrentAwaitedAcksAllPersist(string kind)
    {
        using var h = new StoreHarness(kind);
        var c = h.Store.ConsumerStore("ACKS", Explicit);
        const int n = 1600;
        for (ulong i = 1; i <= n; i++)
        {
            _ = c.UpdateDelivered(i, i, 1, (long)i); // the acks below are awaited, and they cover these
        }
        // Eight acknowledgers, each awaiting its tickets as a server would before replying.
        var workers = Enumerable.Range(0, 8).Select(w => Task.Run(async () =>
        {
            for (var i = (ulong)w + 1; i <= n; i += 8)
            {
                await c.UpdateAcks(i, i);
            }
        })).ToArray();
        await Task.WhenAll(workers);
        var st = c.State();
        Assert.Empty(st.Pending);
        Assert.Equal(new SequencePair(n, n), st.AckFloor);
        foreach (var store in h.NowAndReopened())
        {
            AssertSame(st, store.ConsumerStore("ACKS").State());
        }
    }

    [Fact]
    public void EncodedStateIsGoServersEncoding()
    {
        var mem = StreamStores.CreateMemory(new StoreConfig { Name = "E" });
        var c = mem.ConsumerStore("C", Explicit);
        c.UpdateDelivered(1, 1, 1, 1);
        c.UpdateDelivered(2, 2, 1, 1);
        c.UpdateAcks(1, 1);
        c.UpdateAcks(2, 2);
        // magic 22, version 2, ack floor (2, 2), delivered (2, 2), no pending, no redelivered.
        Assert.Equal([22, 2, 2, 2, 2, 2, 0, 0], c.EncodedState());
        var now = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
        c.UpdateDelivered(3, 5, 1, now);
        c.UpdateDelivered(4, 5, 3, now);
        var decoded = Nats.Storage.Consumers.ConsumerStateCodec.Decode(c.EncodedState())!;
        Assert.Equal(new SequencePair(4, 5), decoded.Delivered);
        Assert.Equal(3UL, decoded.Pending[5].Sequence);
        Assert.Equal(now / 1_000_000_000, decoded.Pending[5].Timestamp / 1_000_000_000); // Go keeps seconds
        Assert.Equal(2UL, decoded.Redelivered[5]);
        Assert.Null(Nats.Storage.Consumers.ConsumerStateCodec.Decode([22, 2, 0x80]));
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void StopAndDelete(string kind)
    {
        using var h = new StoreHarness(kind);
        var c = h.Store.ConsumerStore("D", Explicit);
        c.UpdateDelivered(1, 1, 1, 1);
        c.Delete();
        Assert.Equal(StoreError.Closed, Assert.Throws<StoreException>(() => c.UpdateDelivered(2, 2, 1, 1)).Error);
        Assert.Empty(h.Store.ConsumerNames());
        Assert.False(h.Store.ConsumerStore("D", Explicit).HasState());
        var e = h.Store.ConsumerStore("E", Explicit);
        h.Store.Stop();
        Assert.Equal(StoreError.Closed, Assert.Throws<StoreException>(() => e.State()).Error);
        Assert.Throws<StoreException>(() => h.Store.ConsumerStore("../x", Explicit));
    }

    internal static void AssertSame(ConsumerState expected, ConsumerState actual)
    {
        Assert.Equal(expected.Delivered, actual.Delivered);
        Assert.Equal(expected.AckFloor, actual.AckFloor);
        Assert.Equal(expected.Pending.OrderBy(p => p.Key), actual.Pending.OrderBy(p => p.Key));
        Assert.Equal(expected.Redelivered.OrderBy(p => p.Key), actual.Redelivered.OrderBy(p => p.Key));
    }
}
