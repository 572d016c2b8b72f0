namespace Nats.Storage.Tests;

/// <summary>The store contract, run against both engines (and, for the file engine, across a reopen).</summary>
public sealed class ContractTests
{
    public static TheoryData<string> Kinds => new() { "memory", "file" };

    private static readonly byte[] Payload = Bytes.Of("hello");

    [Theory, MemberData(nameof(Kinds))]
    public void StoresAndLoadsWithHeadersAndTimestamps(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, clock: clock);
        var (s1, t1) = h.Store.StoreMsg("foo", Bytes.Of("NATS/1.0\r\n\r\n"), Payload);
        clock.Advance(TimeSpan.FromSeconds(1));
        var (s2, t2) = h.Store.StoreMsg("bar", default, Bytes.Of("world"));
        Assert.Equal(1UL, s1);
        Assert.Equal(2UL, s2);
        Assert.True(t2 > t1);
        foreach (var store in h.NowAndReopened())
        {
            var m = store.LoadMsg(1)!;
            Assert.Equal("foo", m.Subject);
            Assert.Equal("NATS/1.0\r\n\r\n", Bytes.Str(m.Header));
            Assert.Equal("hello", Bytes.Str(m.Data));
            Assert.Equal(t1, m.Timestamp);
            Assert.Equal("world", Bytes.Str(store.LoadMsg(2)!.Data));
            Assert.Null(store.LoadMsg(3));
            var st = store.State();
            Assert.Equal(2UL, st.Msgs);
            Assert.Equal(1UL, st.FirstSeq);
            Assert.Equal(2UL, st.LastSeq);
            Assert.Equal(2, st.NumSubjects);
            var expectedBytes = h.IsFile ? (22UL + 3 + 4 + 12 + 5 + 8) + (22UL + 3 + 5 + 8) : (3UL + 12 + 5 + 16) + (3UL + 5 + 16);
            Assert.Equal(expectedBytes, st.Bytes);
        }
    }

    [Theory, MemberData(nameof(Kinds))]
    public void LoadNextHonoursLiteralWildcardAndAllFilters(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 300; i++)
        {
            h.Store.StoreMsg(i % 100 == 7 ? $"foo.baz.{i}" : "foo.bar", default, Payload);
        }

        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal(8UL, store.LoadNextMsg("foo.baz.*", 1)!.Sequence);
            Assert.Equal(108UL, store.LoadNextMsg("foo.baz.*", 9)!.Sequence);
            Assert.Equal(208UL, store.LoadNextMsg("foo.>", 208)!.Sequence);
            Assert.Equal(108UL, store.LoadNextMsg("foo.baz.107", 2)!.Sequence);
            Assert.Null(store.LoadNextMsg("foo.baz.*", 209));
            Assert.Equal(1UL, store.LoadNextMsg("foo.bar", 0)!.Sequence);
            Assert.Equal(9UL, store.LoadNextMsg("foo.bar", 8)!.Sequence);
            Assert.Equal(5UL, store.LoadNextMsg("", 5)!.Sequence);
            Assert.Null(store.LoadNextMsg("nope.*", 1));
            Assert.Null(store.LoadNextMsg(">", 301));
        }
    }

    [Theory, MemberData(nameof(Kinds))]
    public void LoadNextSkipsRemovedMessagesAndWalksAllMatches(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 1000; i++)
        {
            h.Store.StoreMsg(i % 10 == 0 ? $"a.{i % 30}" : "b", default, Payload);
        }

        h.Store.RemoveMsg(11);
        h.Store.RemoveMsg(21);
        var seen = new List<ulong>();
        var sm = new StoredMessage();
        for (ulong start = 0; h.Store.LoadNextMsg("a.*", start, sm) is { } m; start = m.Sequence + 1)
        {
            seen.Add(m.Sequence);
        }

        Assert.Equal(98, seen.Count);
        Assert.DoesNotContain(11UL, seen);
        Assert.Equal(Enumerable.Range(0, 100).Select(i => (ulong)(i * 10 + 1)).Where(s => s is not 11 and not 21), seen);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void LoadLastAndPrev(string kind)
    {
        using var h = new StoreHarness(kind);
        h.Store.StoreMsg("x.1", default, Bytes.Of("a"));
        h.Store.StoreMsg("x.2", default, Bytes.Of("b"));
        h.Store.StoreMsg("x.1", default, Bytes.Of("c"));
        h.Store.StoreMsg("y", default, Bytes.Of("d"));
        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal("c", Bytes.Str(store.LoadLastMsg("x.1")!.Data));
            Assert.Equal(3UL, store.LoadLastMsg("x.*")!.Sequence);
            Assert.Equal(4UL, store.LoadLastMsg("")!.Sequence);
            Assert.Null(store.LoadLastMsg("z"));
            Assert.Equal(2UL, store.LoadPrevMsg("x.2", 4)!.Sequence);
            Assert.Equal(3UL, store.LoadPrevMsg("x.*", 4)!.Sequence);
            Assert.Equal(1UL, store.LoadPrevMsg("x.1", 2)!.Sequence);
            Assert.Null(store.LoadPrevMsg("y", 3));
        }
        h.Store.RemoveMsg(3);
        Assert.Equal("a", Bytes.Str(h.Store.LoadLastMsg("x.1")!.Data));
        Assert.Equal(2UL, h.Store.LoadLastMsg("x.>")!.Sequence);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void RemoveEraseAndDeletedAccounting(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 10; i++)
        {
            h.Store.StoreMsg("s", default, Payload);
        }

        Assert.True(h.Store.RemoveMsg(1));
        Assert.True(h.Store.EraseMsg(5));
        Assert.False(h.Store.RemoveMsg(5));
        Assert.False(h.Store.RemoveMsg(99));
        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal(8UL, st.Msgs);
            Assert.Equal(2UL, st.FirstSeq);
            Assert.Equal(1UL, st.NumDeleted);
            Assert.Equal([5UL], store.DeletedSeqs());
            Assert.Null(store.LoadMsg(5));
            Assert.Null(store.LoadMsg(1));
            Assert.Null(st.Lost);
        }
        if (h.IsFile)
        {
            // The erased payload must not be left anywhere in the block files.
            h.Store.Stop();
            var all = Directory.GetFiles(Path.Combine(h.Directory, "msgs"), "*.blk").Select(System.IO.File.ReadAllBytes).ToArray();
            var hits = all.Sum(b => CountOccurrences(b, Payload));
            Assert.Equal(9, hits); // 10 stored, one erased; a plain removal does not scrub
            h.Reopen();
        }
    }

    private static int CountOccurrences(byte[] hay, byte[] needle)
    {
        var n = 0;
        for (var i = hay.AsSpan().IndexOf(needle); i >= 0;)
        {
            n++;
            var next = hay.AsSpan(i + 1).IndexOf(needle);
            i = next < 0 ? -1 : i + 1 + next;
        }
        return n;
    }

    [Theory, MemberData(nameof(Kinds))]
    public void PurgeKeepsSequenceMoving(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 50; i++)
        {
            h.Store.StoreMsg($"p.{i % 5}", default, Payload);
        }

        Assert.Equal(50UL, h.Store.Purge());
        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal(0UL, st.Msgs);
            Assert.Equal(51UL, st.FirstSeq);
            Assert.Equal(50UL, st.LastSeq);
            Assert.Equal(0, st.NumSubjects);
        }
        Assert.Equal(51UL, h.Store.StoreMsg("p.1", default, Payload).Seq);
        Assert.Equal(51UL, h.Reopen().State().FirstSeq);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void PurgeExBySubjectWithKeepAndSequence(string kind)
    {
        using var h = new StoreHarness(kind);
        for (var i = 0; i < 30; i++)
        {
            h.Store.StoreMsg(i % 3 == 0 ? "k.a" : "k.b", default, Payload);
        }

        Assert.Equal(7UL, h.Store.PurgeEx("k.a", 0, 3));
        Assert.Equal(3UL, h.Store.FilteredState(0, "k.a").Msgs);
        Assert.Equal(4UL, h.Store.PurgeEx("k.b", 8, 0));
        foreach (var store in h.NowAndReopened())
        {
            Assert.Equal(16UL, store.FilteredState(0, "k.b").Msgs);
            Assert.Equal(8UL, store.FilteredState(0, "k.b").First);
            Assert.Equal(19UL, store.State().Msgs);
        }
        Assert.Equal(19UL, h.Store.PurgeEx("k.*", 0, 0));
        Assert.Equal(0UL, h.Store.State().Msgs);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void CompactAndTruncate(string kind)
    {
        using var h = new StoreHarness(kind, blockSize: 1024);
        for (var i = 0; i < 100; i++)
        {
            h.Store.StoreMsg($"c.{i % 4}", default, Payload);
        }

        Assert.Equal(39UL, h.Store.Compact(40));
        h.Store.Truncate(80);
        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal(40UL, st.FirstSeq);
            Assert.Equal(80UL, st.LastSeq);
            Assert.Equal(41UL, st.Msgs);
            Assert.Null(store.LoadMsg(81));
            Assert.Equal(80UL, store.LoadLastMsg("c.>")!.Sequence);
        }
        Assert.Equal(81UL, h.Store.StoreMsg("c.9", default, Payload).Seq);
        Assert.Equal(81UL, h.Reopen().LoadMsg(81)!.Sequence);
        Assert.Equal(42UL, h.Store.Compact(1000));
        var end = h.Reopen().State();
        Assert.Equal(1000UL, end.FirstSeq);
        Assert.Equal(999UL, end.LastSeq);
        Assert.Equal(1000UL, h.Store.StoreMsg("c.1", default, Payload).Seq);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void BulkRemovalsAcrossIndexChunks(string kind)
    {
        // More messages than one index chunk (4,096), with removals that release chunks mid-loop;
        // a plain model gives the expected answers.
        using var h = new StoreHarness(kind, blockSize: 64 * 1024);
        var model = new SortedDictionary<ulong, string>();
        for (var i = 0; i < 20_000; i++)
        {
            var subject = $"bulk.{i % 10}";
            model[h.Store.StoreMsg(subject, default, Payload).Seq] = subject;
        }
        for (ulong s = 1; s <= 20_000; s += 3)
        {
            h.Store.RemoveMsg(s);
            model.Remove(s);
        }
        var bulk3 = model.Where(kv => kv.Value == "bulk.3").Select(kv => kv.Key).ToList();
        Assert.Equal((ulong)(bulk3.Count - 133), h.Store.PurgeEx("bulk.3", 0, 133));
        foreach (var s in bulk3.Take(bulk3.Count - 133))
        {
            model.Remove(s);
        }

        var below = model.Keys.Where(k => k < 12_345).ToList();
        Assert.Equal((ulong)below.Count, h.Store.Compact(12_345));
        below.ForEach(k => model.Remove(k));
        below = model.Keys.Where(k => k < 15_000).ToList();
        Assert.Equal((ulong)below.Count, h.Store.PurgeEx("bulk.*", 15_000, 0));
        below.ForEach(k => model.Remove(k));
        foreach (var store in h.NowAndReopened())
        {
            var st = store.State();
            Assert.Equal((ulong)model.Count, st.Msgs);
            Assert.Equal(model.Keys.First(), st.FirstSeq);
            Assert.Equal(20_000UL, st.LastSeq);
            for (ulong s = 14_000; s <= 20_000; s++)
            {
                Assert.Equal(model.ContainsKey(s), store.LoadMsg(s) is not null);
            }

            Assert.Equal((ulong)model.Count(kv => kv.Value == "bulk.3"), store.FilteredState(0, "bulk.3").Msgs);
        }
    }

    [Theory, MemberData(nameof(Kinds))]
    public void SkipMessages(string kind)
    {
        using var h = new StoreHarness(kind);
        Assert.Equal(1UL, h.Store.SkipMsg());
        h.Store.SkipMsgs(2, 10);
        Assert.Throws<StoreException>(() => h.Store.SkipMsgs(5, 1));
        var st = h.Reopen().State();
        Assert.Equal(11UL, st.LastSeq);
        Assert.Equal(12UL, st.FirstSeq);
        Assert.Equal(12UL, h.Store.StoreMsg("s", default, Payload).Seq);
        h.Store.SkipMsg();
        Assert.Equal(14UL, h.Reopen().StoreMsg("s", default, Payload).Seq);
        Assert.Equal(1UL, h.Store.State().NumDeleted);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void FilteredStateAndPendingAcrossStartSequences(string kind)
    {
        using var h = new StoreHarness(kind);
        // 100 x "o.N" for N in 0..9 interleaved, plus "z" every 7th.
        for (var i = 1; i <= 200; i++)
        {
            h.Store.StoreMsg(i % 7 == 0 ? "z" : $"o.{i % 10}", default, Payload);
        }

        h.Store.RemoveMsg(100);
        var all = Enumerable.Range(1, 200).Where(i => i != 100).ToList();
        string SubjectOf(int i) => i % 7 == 0 ? "z" : $"o.{i % 10}";
        foreach (var store in h.NowAndReopened())
        {
            foreach (var filter in new[] { "o.*", "o.3", "z", ">", "o.>", "*" })
            {
                foreach (var sseq in new ulong[] { 0, 1, 50, 101, 150, 199, 200, 201 })
                {
                    var expected = all.Where(i => (ulong)i >= sseq && SubjectMatchForTest(SubjectOf(i), filter)).ToList();
                    var fs = store.FilteredState(sseq, filter);
                    Assert.Equal((ulong)expected.Count, fs.Msgs);
                    Assert.Equal(expected.Count == 0 ? 0UL : (ulong)expected[0], fs.First);
                    Assert.Equal(expected.Count == 0 ? 0UL : (ulong)expected[^1], fs.Last);
                    Assert.Equal((ulong)expected.Count, store.NumPending(sseq, filter, false).Total);
                    Assert.Equal((ulong)expected.Select(SubjectOf).Distinct().Count(), store.NumPending(sseq, filter, true).Total);
                }
            }
            var states = store.SubjectsState("o.*");
            Assert.Equal(10, states.Count);
            Assert.Equal(new SimpleState(17, 1, 191), states["o.1"]);
            Assert.Equal(28UL, store.SubjectsTotals("z")["z"]);
            Assert.Equal(11, store.AllLastSeqs().Length);
        }
    }

    private static bool SubjectMatchForTest(string subject, string filter) =>
        Nats.Subjects.SubjectRules.IsMatchAll(filter) || Nats.Subjects.SubjectRules.Matches(subject, filter);

    [Theory, MemberData(nameof(Kinds))]
    public void RawStoreWithGapsAndWrongSequence(string kind)
    {
        using var h = new StoreHarness(kind);
        h.Store.StoreRawMsg("r", default, Payload, 10, 1_000);
        Assert.Throws<StoreException>(() => h.Store.StoreRawMsg("r", default, Payload, 10, 2_000));
        h.Store.StoreRawMsg("r", default, Payload, 12, 3_000);
        var st = h.Reopen().State();
        Assert.Equal(10UL, st.FirstSeq);
        Assert.Equal(12UL, st.LastSeq);
        Assert.Equal(1UL, st.NumDeleted);
        Assert.Equal(3_000, h.Store.LoadMsg(12)!.Timestamp);
    }

    [Theory, MemberData(nameof(Kinds))]
    public void ClosedStoreRefusesWork(string kind)
    {
        using var h = new StoreHarness(kind);
        h.Store.Stop();
        Assert.Equal("store is closed", Assert.Throws<StoreException>(() => h.Store.StoreMsg("x", default, Payload)).Message);
    }
}
