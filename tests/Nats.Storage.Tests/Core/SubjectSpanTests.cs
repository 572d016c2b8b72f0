using Nats.Storage.Core;
using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>Span subject summaries (Go's per-block fss role): filtered reads, counts, last-per-subject and
/// subject purges answer exactly as a brute-force model while removals change the spans, and a read of a
/// rare subject pages in only the index chunks of spans that hold it.</summary>
public sealed class SubjectSpanTests
{
    private const int Messages = 12_000;

    // 64-sequence chunks, so spans of 1,024 sequences and summaries built for ranges of 64 or more.
    private static StoreHarness Harness(string kind)
    {
        var h = new StoreHarness(kind, blockSize: 16 * 1024) { IndexPageShift = 6, MaxIndexBytes = 1 };
        h.Reopen();
        return h;
    }

    private static SortedDictionary<ulong, string> Fill(IStreamStore store)
    {
        var model = new SortedDictionary<ulong, string>();
        for (var i = 0; i < Messages; i++)
        {
            // "rare" appears in two short bursts only; "kv.N" are rewritten all along.
            var subject = i is >= 3_000 and < 3_010 or >= 9_500 and < 9_505 ? "rare.x" : i % 5 == 0 ? $"kv.{i % 35}" : $"bulk.{i % 13}";
            model[store.StoreMsg(subject, default, [(byte)i]).Seq] = subject;
        }
        return model;
    }

    [Theory]
    [InlineData("file")]
    [InlineData("memory")]
    public void AnswersMatchTheModelThroughRemovals(string kind)
    {
        using var h = Harness(kind);
        var store = h.Store;
        var model = Fill(store);
        var rnd = new Random(5);
        string[] filters = ["rare.x", "rare.*", "kv.10", "kv.*", "bulk.3", "*.3", ">", "none.*"];
        for (var round = 0; round < 4; round++)
        {
            foreach (var filter in filters)
            {
                for (var probe = 0; probe < 12; probe++)
                {
                    var start = (ulong)rnd.Next(1, Messages + 2);
                    var matching = model.Where(kv => Matches(kv.Value, filter)).Select(kv => kv.Key).ToList();
                    var next = matching.FirstOrDefault(s => s >= start);
                    Assert.Equal(next, store.LoadNextMsg(filter, start)?.Sequence ?? 0);
                    var prev = matching.LastOrDefault(s => s <= start);
                    Assert.Equal(prev, store.LoadPrevMsg(filter, start)?.Sequence ?? 0);
                    var filtered = store.FilteredState(start, filter);
                    Assert.Equal((ulong)matching.Count(s => s >= start), filtered.Msgs);
                    Assert.Equal((ulong)matching.Count(s => s >= start), store.NumPending(start, filter, false).Total);
                }
            }
            foreach (var subject in new[] { "rare.x", "kv.10", "bulk.3" })
            {
                var maxSeq = (ulong)rnd.Next(1, Messages);
                var expected = model.Where(kv => kv.Value == subject && kv.Key <= maxSeq).Select(kv => kv.Key).DefaultIfEmpty().Max();
                var got = store.MultiLastSeqs([subject], maxSeq, 0);
                Assert.Equal(expected == 0 ? [] : new[] { expected }, got);
            }
            // Removals at span edges, inside spans and of a subject's first and last messages.
            foreach (var seq in model.Keys.Where(_ => rnd.Next(6) == 0).ToArray())
            {
                Assert.True(store.RemoveMsg(seq));
                model.Remove(seq);
            }
            var kvFirst = model.First(kv => kv.Value == "kv.10").Key;
            Assert.True(store.RemoveMsg(kvFirst));
            model.Remove(kvFirst);
            var purged = store.PurgeEx("bulk.*", (ulong)(Messages / 2), 0);
            var expectedPurge = model.Where(kv => kv.Value.StartsWith("bulk.", StringComparison.Ordinal) && kv.Key < Messages / 2).Select(kv => kv.Key).ToArray();
            Assert.Equal((ulong)expectedPurge.Length, purged);
            foreach (var seq in expectedPurge)
            {
                model.Remove(seq);
            }
            Assert.Equal((ulong)model.Count(kv => kv.Value == "kv.10"), store.FilteredState(1, "kv.10").Msgs);
        }
        if (kind == "file")
        {
            Assert.True(((StoreCore)store).SpanSummaries.Spans > 0);
        }
    }

    [Theory]
    [InlineData("file")]
    [InlineData("memory")]
    public void LiteralAndWildcardWalksAgreeBothWays(string kind)
    {
        // One search walks spans for both: a literal subject answers from one summary entry per span, a
        // wildcard from a walk of each span's subjects. Pairs name the same messages both ways; the others
        // are sparse (kv.10: one in 35, past the direct scan window) or dense, each walked whole.
        using var h = Harness(kind);
        var store = h.Store;
        var model = Fill(store);
        var rnd = new Random(11);
        foreach (var seq in model.Keys.Where(_ => rnd.Next(4) == 0).ToArray())
        {
            Assert.True(store.RemoveMsg(seq));
            model.Remove(seq);
        }
        (string Literal, string Wildcard)[] pairs = [("rare.x", "rare.*"), ("rare.x", "*.x")];
        foreach (var (literal, wildcard) in pairs)
        {
            Assert.Equal(WalkBack(store, literal), WalkBack(store, wildcard));
            Assert.Equal(WalkForward(store, literal), WalkForward(store, wildcard));
        }
        foreach (var filter in new[] { "rare.x", "rare.*", "kv.10", "kv.*", "bulk.3", "*.3", ">" })
        {
            var expected = model.Where(kv => Matches(kv.Value, filter)).Select(kv => kv.Key).ToList();
            Assert.Equal(expected, WalkForward(store, filter));
            expected.Reverse();
            Assert.Equal(expected, WalkBack(store, filter));
        }
    }

    private static List<ulong> WalkBack(IStreamStore store, string filter)
    {
        var found = new List<ulong>();
        var reuse = new StoredMessage();
        for (var seq = store.State().LastSeq; seq > 0 && store.LoadPrevMsg(filter, seq, reuse) is { } sm; seq = sm.Sequence - 1)
        {
            found.Add(sm.Sequence);
        }
        return found;
    }

    private static List<ulong> WalkForward(IStreamStore store, string filter)
    {
        var found = new List<ulong>();
        var reuse = new StoredMessage();
        for (var seq = 1UL; store.LoadNextMsg(filter, seq, reuse) is { } sm; seq = sm.Sequence + 1)
        {
            found.Add(sm.Sequence);
        }
        return found;
    }

    [Fact]
    public void RareSubjectReadSkipsSpansWithoutIt()
    {
        using var h = Harness("file");
        var store = (FileStore)h.Store;
        Fill(store);
        var first = ReadAll(store, "rare.x"); // builds the summaries
        Assert.Equal(15, first);
        var loads = store.IndexPageLoads;
        ((StoreCore)store).FilteredState(2, "rare.x");
        Assert.Equal(15, ReadAll(store, "rare.x"));
        // The two bursts lie in two spans (16 chunks each at most); a scan would page in all ~190 chunks.
        Assert.True(store.IndexPageLoads - loads <= 2 * 16 * 2, $"{store.IndexPageLoads - loads} index pages loaded");
    }

    [Fact]
    public void IdleSummariesAreDropped()
    {
        using var h = Harness("file");
        var store = (FileStore)h.Store;
        var model = Fill(store);
        var expected = (ulong)model.Count(kv => kv.Key >= Messages / 2 && kv.Value == "kv.10");
        Assert.Equal(expected, store.FilteredState(Messages / 2, "kv.10").Msgs); // a straddling count builds summaries
        Assert.True(((StoreCore)store).SpanSummaries.Spans > 0);
        store.ExpireCaches();
        store.ExpireCaches();
        Assert.Equal((0, 0), ((StoreCore)store).SpanSummaries);
        Assert.Equal(expected, store.FilteredState(Messages / 2, "kv.10").Msgs);
    }

    private static int ReadAll(IStreamStore store, string filter)
    {
        var n = 0;
        var reuse = new StoredMessage();
        for (var seq = 1UL; store.LoadNextMsg(filter, seq, reuse) is { } sm; seq = sm.Sequence + 1)
        {
            n++;
        }
        return n;
    }

    // The filters above use only '*' as a whole token and a lone '>'.
    private static bool Matches(string subject, string filter)
    {
        if (filter == ">")
        {
            return true;
        }

        var a = subject.Split('.');
        var b = filter.Split('.');
        return a.Length == b.Length && a.Zip(b).All(p => p.Second == "*" || p.First == p.Second);
    }
}
