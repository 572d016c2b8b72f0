using Nats.Storage.Core;

namespace Nats.Storage.Tests.Core;

/// <summary>The sequence index releases the chunks of removed ranges at once; every query across the
/// released ranges must answer exactly as a brute-force oracle does, now and after a reopen.</summary>
public sealed class SparseIndexTests
{
    [Theory, MemberData(nameof(ContractTests.Kinds), MemberType = typeof(ContractTests))]
    public void RemovedRangesFreeTheirIndexAndQueriesStillAgree(string kind)
    {
        var clock = new ManualClock();
        using var h = new StoreHarness(kind, blockSize: 64 * 1024, clock: clock);
        const int n = 60_000;
        var times = new long[n + 1];
        for (var i = 1; i <= n; i++)
        {
            times[i] = h.Store.StoreMsg(i % 15_000 == 1 ? "keep.a" : i % 2 == 0 ? "bulk.even" : "bulk.odd", default, Bytes.Of("x")).Timestamp;
            if (i % 3 == 0)
            {
                clock.Advance(TimeSpan.FromMilliseconds(1));
            }
        }
        var full = ((StoreCore)h.Store).IndexChunks;
        Assert.True(full >= n / 4096);
        // Remove everything but the "keep" messages and the last 100, in a shuffled order.
        var victims = Enumerable.Range(1, n - 100).Where(i => i % 15_000 != 1).Select(i => (ulong)i).ToArray();
        new Random(5).Shuffle(victims);
        foreach (var v in victims)
        {
            Assert.True(h.Store.RemoveMsg(v));
        }

        var live = Enumerable.Range(1, n).Where(i => i % 15_000 == 1 || i > n - 100).Select(i => (ulong)i).ToList();
        Assert.True(((StoreCore)h.Store).IndexChunks <= 6, $"{((StoreCore)h.Store).IndexChunks} chunks still allocated");

        foreach (var store in h.NowAndReopened())
        {
            Assert.True(((StoreCore)store).IndexChunks <= 6);
            Check(store, live, times);
        }
        // Writes after the sparse range, then a truncate back into a released range.
        for (var i = 0; i < 10; i++)
        {
            live.Add(h.Store.StoreMsg("late", default, Bytes.Of("y")).Seq);
        }

        h.Store.Truncate(30_001);
        live.RemoveAll(s => s > 30_001);
        foreach (var store in h.NowAndReopened())
        {
            Check(store, live, times);
            Assert.Equal(30_001UL, store.State().LastSeq);
        }
        var next = h.Store.StoreMsg("after", default, Bytes.Of("z")).Seq;
        Assert.Equal(30_002UL, next);
        Assert.Equal(next, h.Store.LoadLastMsg(">")!.Sequence);
    }

    private static void Check(IStreamStore store, List<ulong> live, long[] times)
    {
        var st = store.State();
        Assert.Equal((ulong)live.Count, st.Msgs);
        Assert.Equal(live[0], st.FirstSeq);
        Assert.Equal(st.LastSeq - st.FirstSeq + 1 - st.Msgs, st.NumDeleted);
        Assert.Equal(st.NumDeleted, (ulong)store.DeletedSeqs().Length);
        var sm = new StoredMessage();
        for (ulong start = 0; start <= st.LastSeq + 1; start += 997)
        {
            var next = live.FirstOrDefault(s => s >= start);
            Assert.Equal(next, store.LoadNextMsg(">", start, sm)?.Sequence ?? 0);
            var nextKeep = live.FirstOrDefault(s => s >= start && s % 15_000 == 1 && s <= 60_000 - 100);
            Assert.Equal(nextKeep, store.LoadNextMsg("keep.*", start, sm)?.Sequence ?? 0);
            var prev = live.LastOrDefault(s => s <= start);
            Assert.Equal(prev, store.LoadPrevMsg(">", start, sm)?.Sequence ?? 0);
            Assert.Equal((ulong)live.Count(s => s >= start), store.NumPending(start, ">", false).Total);
            Assert.Equal((ulong)live.Count(s => s >= start && s <= 60_000 && s % 2 == 0 && s % 15_000 != 1),
                store.FilteredState(start, "bulk.even").Msgs);
        }
        foreach (var seq in new ulong[] { 1, 2, 4095, 4096, 4097, 15_001, 15_002, 29_999, 45_001, 59_950, 60_000 })
        {
            if (seq >= (ulong)times.Length || seq > st.LastSeq)
            {
                continue;
            }

            var at = DateTime.UnixEpoch.AddTicks(times[seq] / 100);
            var expected = live.Where(s => s < (ulong)times.Length && times[s] >= times[seq]).DefaultIfEmpty(st.LastSeq + 1).First();
            Assert.Equal(expected, store.GetSeqFromTime(at));
        }
    }
}
