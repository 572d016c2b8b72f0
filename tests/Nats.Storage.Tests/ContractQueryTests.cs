using Nats.Storage.Subjects;

namespace Nats.Storage.Tests;

/// <summary>The calls JetStream consumers make beyond the basic contract (Go's StreamStore): EOF versus
/// not found, skip hints, multi-filter loads and counts, FastState, TTL "never", removal reasons and
/// configuration updates, against both engines (the file engine also after a reopen).</summary>
public sealed class ContractQueryTests
{
    private static readonly byte[] Payload = Bytes.Of("hello");

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void TryLoadTellsNotFoundFromEof(string kind)
    {
        using var h = new StoreHarness(kind);
        var sm = new StoredMessage();
        Assert.Equal(LoadStatus.Eof, h.Store.TryLoadMsg(1, sm));
        for (var i = 0; i < 5; i++)
        {
            h.Store.StoreMsg("a", default, Payload);
        }

        h.Store.RemoveMsg(1);
        h.Store.RemoveMsg(3);
        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal(LoadStatus.NotFound, store.TryLoadMsg(1, sm));
            Assert.Equal(LoadStatus.Found, store.TryLoadMsg(2, sm));
            Assert.Equal(2UL, sm.Sequence);
            Assert.Equal(LoadStatus.NotFound, store.TryLoadMsg(3, sm));
            Assert.Equal(LoadStatus.Found, store.TryLoadMsg(5, sm));
            Assert.Equal(LoadStatus.Eof, store.TryLoadMsg(6, sm));
            Assert.Equal(LoadStatus.NotFound, store.TryLoadMsg(0, sm));
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void LoadNextReportsSkipHint(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 100; i++)
        {
            h.Store.StoreMsg(i == 40 ? "rare" : "common", default, Payload);
        }

        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal(41UL, store.LoadNextMsg("rare", 1, null, out var skip)!.Sequence);
            Assert.Equal(41UL, skip);
            Assert.Null(store.LoadNextMsg("rare", 42, null, out skip));
            Assert.Equal(100UL, skip); // EOF: resume after the last sequence
            Assert.Null(store.LoadNextMsg("none.*", 1, null, out skip));
            Assert.Equal(100UL, skip);
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void MultiFilterLoadsAndCountsMatchABruteForceOracle(string kind)
    {
        using var h = new StoreHarness(kind);
        var rnd = new Random(7);
        var subjects = new[] { "orders.new", "orders.paid", "orders.eu.new", "ship.eu", "ship.us", "audit" };
        for (var i = 0; i < 600; i++)
        {
            h.Store.StoreMsg(subjects[rnd.Next(subjects.Length)], default, Payload);
        }

        for (var i = 0; i < 150; i++)
        {
            h.Store.RemoveMsg((ulong)rnd.Next(1, 601));
        }

        var sets = new[]
        {
            new[] { "orders.*", "orders.new" },         // overlapping: each message counted once
            new[] { "ship.>", "audit" },
            new[] { "orders.eu.new", "ship.us", "nope.*" },
            new[] { "orders.>", ">" },                  // contains everything
        };
        foreach (var store in h.NowAndReopened())
        {
            var live = Enumerable.Range(1, 600).Select(s => (ulong)s)
                .Select(s => (Seq: s, Subject: store.SubjectForSeq(s))).Where(x => x.Subject is not null).ToList();
            foreach (var filters in sets)
            {
                var set = new SubjectFilterSet(filters);
                var sm = new StoredMessage();
                for (ulong start = 0; start <= 602; start += 7)
                {
                    var expected = live.Where(x => x.Seq >= start && set.Matches(x.Subject!)).ToList();
                    var got = store.LoadNextMsgMulti(set, start, sm, out var skip);
                    Assert.Equal(expected.Count == 0 ? 0UL : expected[0].Seq, got?.Sequence ?? 0);
                    Assert.Equal(expected.Count == 0 ? 600UL : expected[0].Seq, skip);

                    var (total, through) = store.NumPendingMulti(start, set, lastPerSubject: false);
                    Assert.Equal((ulong)expected.Count, total);
                    Assert.Equal(600UL, through);
                    var (perSubject, _) = store.NumPendingMulti(start, set, lastPerSubject: true);
                    Assert.Equal((ulong)expected.Select(x => x.Subject).Distinct().Count(), perSubject);

                    var prev = live.Where(x => x.Seq <= start && set.Matches(x.Subject!)).ToList();
                    var p = store.LoadPrevMsgMulti(set, start, sm, out var pskip);
                    Assert.Equal(prev.Count == 0 ? 0UL : prev[^1].Seq, p?.Sequence ?? 0);
                    Assert.Equal(p?.Sequence ?? 0, pskip);
                }
            }
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void MultiLastSeqsHonoursMaxSeqAndCap(string kind)
    {
        using var h = new StoreHarness(kind);
        foreach (var s in new[] { "kv.a", "kv.b", "kv.a", "other", "kv.c", "kv.b" })
        {
            h.Store.StoreMsg(s, default, Payload);
        }

        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal([3UL, 5, 6], store.MultiLastSeqs(["kv.*"], 0, 0));
            Assert.Equal([2UL, 3], store.MultiLastSeqs(["kv.*", "kv.a"], 4, 0));
            Assert.Equal([3UL, 4, 5, 6], store.MultiLastSeqs(["kv.*", "other"], 0, 4));
            var e = Assert.Throws<StoreException>(() => store.MultiLastSeqs([">"], 0, 3));
            Assert.Equal("too many matching results for request", e.Message);
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void FastStateAgreesWithState(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, clock: clock);
        for (var i = 0; i < 50; i++)
        {
            h.Store.StoreMsg($"s.{i % 4}", default, Payload);
            clock.Advance(TimeSpan.FromSeconds(1));
        }
        h.Store.RemoveMsg(1);
        h.Store.RemoveMsg(20);
        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            var fast = store.FastState();
            Assert.Equal(new FastStreamState(st.Msgs, st.Bytes, st.FirstSeq, st.FirstTime, st.LastSeq, st.LastTime, st.NumSubjects, st.NumDeleted), fast);
            Assert.Equal(1UL, fast.NumDeleted);
        }
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void TtlNeverSurvivesMaxAge(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, new StoreConfig { Name = "T", MaxAge = TimeSpan.FromMinutes(1) }, clock: clock);
        h.Store.StoreMsg("schema", default, Payload, ttl: -1);
        h.Store.StoreMsg("data", default, Payload);
        h.Store.StoreMsg("schema", default, Payload, ttl: -1);
        clock.Advance(TimeSpan.FromSeconds(30));
        h.Store.StoreMsg("data", default, Payload);
        clock.Advance(TimeSpan.FromSeconds(40));
        h.Store.ExpireMessages();
        Assert.Equal([1UL, 3, 4], Live(h.Store));
        h.Reopen();
        clock.Advance(TimeSpan.FromMinutes(5));
        h.Store.ExpireMessages();
        Assert.Equal([1UL, 3], Live(h.Store));
        Assert.Equal(1UL, h.Store.State().FirstSeq);
        h.Store.StoreMsg("data", default, Payload);
        clock.Advance(TimeSpan.FromMinutes(2));
        h.Store.ExpireMessages();
        Assert.Equal([1UL, 3], Live(h.Store));
        Assert.True(h.Store.RemoveMsg(1)); // "never" only exempts from expiry, not from removal
        Assert.Equal(3UL, h.Store.State().FirstSeq);
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void RemovalCallbacksCarryTheReason(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, new StoreConfig { Name = "R", MaxMsgs = 8, MaxMsgsPerSubject = 3 }, clock: clock);
        var seen = new List<(ulong Seq, string Subject, RemovalReason Reason)>();
        h.Store.RegisterStorageRemovals((seq, subject, reason) => seen.Add((seq, subject, reason)));
        for (var i = 0; i < 4; i++)
        {
            h.Store.StoreMsg("per", default, Payload);                  // 4th trims seq 1
        }

        for (var i = 0; i < 6; i++)
        {
            h.Store.StoreMsg($"m.{i}", default, Payload);              // 5..10; 10th trims seq 2
        }

        h.Store.StoreMsg("ttl", default, Payload, ttl: 1);              // 11, trims 3
        h.Store.RemoveMsg(5);
        h.Store.EraseMsg(6);
        clock.Advance(TimeSpan.FromSeconds(2));
        h.Store.ExpireMessages();
        h.Store.Truncate(9);
        h.Store.PurgeEx("m.2", 0, 0);
        h.Store.Purge();
        Assert.Equal(
        [
            (1UL, "per", RemovalReason.MaxMsgsPerSubject),
            (2UL, "per", RemovalReason.MaxMsgs),
            (3UL, "per", RemovalReason.MaxMsgs),
            (5UL, "m.0", RemovalReason.Removed),
            (6UL, "m.1", RemovalReason.Erased),
            (11UL, "ttl", RemovalReason.Ttl),
            (10UL, "m.5", RemovalReason.Truncate),
            (7UL, "m.2", RemovalReason.Purge),
            (9UL, "", RemovalReason.Purge),
        ], seen);
        h.Store.UpdateConfig(h.Config with { MaxAge = TimeSpan.FromSeconds(1) });
        h.Store.StoreMsg("old", default, Payload);
        clock.Advance(TimeSpan.FromSeconds(5));
        h.Store.ExpireMessages();
        Assert.Equal((10UL, "old", RemovalReason.MaxAge), seen[^1]);
    }

    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void UpdateConfigAppliesAtOnceAndRefusesAnotherEngine(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, new StoreConfig { Name = "U" }, clock: clock);
        for (var i = 0; i < 10; i++)
        {
            h.Store.StoreMsg(i % 2 == 0 ? "even" : "odd", default, Payload);
            clock.Advance(TimeSpan.FromSeconds(10));
        }
        h.Store.UpdateConfig(h.Config with { MaxMsgsPerSubject = 3 });
        Assert.Equal(6UL, h.Store.State().Msgs);
        h.Store.UpdateConfig(h.Config with { MaxMsgsPerSubject = 3, MaxAge = TimeSpan.FromSeconds(35) });
        Assert.Equal([8UL, 9, 10], Live(h.Store)); // now 100 s: 35 s ago is 65 s, stored at 70-90 s survive
        var other = h.IsFile ? StorageType.Memory : StorageType.File;
        var e = Assert.Throws<StoreException>(() => h.Store.UpdateConfig(h.Config with { Storage = other }));
        Assert.Equal(StoreError.WrongType, e.Error);
        Assert.Equal(h.IsFile ? "fileStore requires file storage type in config" : "memStore requires memory storage type in config", e.Message);
        h.Store.UpdateConfig(h.Config with { Storage = h.Store.Type });
        h.Store.Stop();
        Assert.Equal(StoreError.Closed, Assert.Throws<StoreException>(() => h.Store.UpdateConfig(h.Config)).Error);
    }

    private static ulong[] Live(IStreamStore store)
    {
        var st = store.State();
        var result = new List<ulong>();
        var sm = new StoredMessage();
        for (var s = st.FirstSeq; s <= st.LastSeq; s++)
        {
            if (store.TryLoadMsg(s, sm) == LoadStatus.Found)
            {
                result.Add(s);
            }
        }
        return [.. result];
    }
}
