namespace Nats.Storage.Tests;

/// <summary>The contract's limits, expiry, time lookup and update callbacks, against both engines.</summary>
public sealed class ContractLimitTests
{
    private static readonly byte[] Payload = Bytes.Of("hello");

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void LimitsDiscardOld(string kind)
    {
        using var h = new StoreHarness(kind, new StoreConfig { MaxMsgs = 10, MaxMsgsPerSubject = 3 });
        for (var i = 0; i < 40; i++)
        {
            h.Store.StoreMsg(i < 20 ? "one" : $"many.{i}", default, Payload);
        }

        var st = h.Store.State();
        Assert.Equal(10UL, st.Msgs);
        Assert.Equal(31UL, st.FirstSeq);
        h.Store.UpdateConfig(h.Config with { MaxMsgs = -1, MaxBytes = h.IsFile ? 5 * 44 : 5 * 28 });
        Assert.Equal(5UL, h.Reopen().State().Msgs);
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void LimitsDiscardNew(string kind)
    {
        using var h = new StoreHarness(kind, new StoreConfig
        {
            MaxMsgs = 3,
            Discard = DiscardPolicy.New,
            MaxMsgsPerSubject = 2,
            DiscardNewPerSubject = true,
            MaxMsgSize = 8,
        });
        h.Store.StoreMsg("a", default, Payload);
        h.Store.StoreMsg("a", default, Payload);
        Assert.Equal(StoreError.MaxMsgsPerSubject, Assert.Throws<StoreException>(() => h.Store.StoreMsg("a", default, Payload)).Error);
        h.Store.StoreMsg("b", default, Payload);
        var e = Assert.Throws<StoreException>(() => h.Store.StoreMsg("c", default, Payload));
        Assert.Equal("maximum messages exceeded", e.Message);
        Assert.Equal(StoreError.MsgTooLarge, Assert.Throws<StoreException>(() => h.Store.StoreMsg("c", default, new byte[9])).Error);
        Assert.Equal(3UL, h.Store.State().LastSeq);
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void MaxAgeAndPerMessageTtlExpire(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, new StoreConfig { MaxAge = TimeSpan.FromMinutes(1) }, clock: clock);
        h.Store.StoreMsg("a", default, Payload);
        clock.Advance(TimeSpan.FromSeconds(30));
        h.Store.StoreMsg("b", default, Payload, ttl: 5);
        h.Store.StoreMsg("c", default, Payload);
        clock.Advance(TimeSpan.FromSeconds(10));
        h.Store.ExpireMessages();
        Assert.Null(h.Store.LoadMsg(2));
        Assert.Equal(2UL, h.Store.State().Msgs);
        clock.Advance(TimeSpan.FromSeconds(25));
        h.Store.ExpireMessages();
        Assert.Equal(3UL, h.Store.State().FirstSeq);
        h.Reopen();
        clock.Advance(TimeSpan.FromSeconds(60));
        h.Store.ExpireMessages();
        var st = h.Store.State();
        Assert.Equal(0UL, st.Msgs);
        Assert.Equal(4UL, st.FirstSeq);
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void TtlSurvivesReopen(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, clock: clock);
        h.Store.StoreMsg("t", default, Payload, ttl: 2);
        h.Store.StoreMsg("u", default, Payload);
        h.Reopen();
        clock.Advance(TimeSpan.FromSeconds(3));
        h.Store.ExpireMessages();
        Assert.Null(h.Store.LoadMsg(1));
        Assert.NotNull(h.Store.LoadMsg(2));
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void SeqFromTime(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, clock: clock);
        var start = clock.GetUtcNow().UtcDateTime;
        for (var i = 0; i < 20; i++)
        {
            h.Store.StoreMsg("t", default, Payload);
            clock.Advance(TimeSpan.FromSeconds(1));
        }
        h.Store.RemoveMsg(6);
        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal(1UL, store.GetSeqFromTime(start.AddHours(-1)));
            Assert.Equal(5UL, store.GetSeqFromTime(start.AddSeconds(4)));
            Assert.Equal(7UL, store.GetSeqFromTime(start.AddSeconds(5)));
            Assert.Equal(21UL, store.GetSeqFromTime(start.AddHours(1)));
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void UpdateCallbacksReportEveryChange(string kind)
    {
        using var h = new StoreHarness(kind, new StoreConfig { MaxMsgs = 2 });
        long msgs = 0, bytes = 0;
        var removed = new List<ulong>();
        h.Store.RegisterStorageUpdates((md, bd, seq, _) =>
        {
            msgs += md;
            bytes += bd;
            if (md < 0)
            {
                removed.Add(seq);
            }
        });
        for (var i = 0; i < 5; i++)
        {
            h.Store.StoreMsg("cb", default, Payload);
        }

        h.Store.RemoveMsg(5);
        var st = h.Store.State();
        Assert.Equal((long)st.Msgs, msgs);
        Assert.Equal((long)st.Bytes, bytes);
        Assert.Equal([1UL, 2, 3, 5], removed);
    }
}
