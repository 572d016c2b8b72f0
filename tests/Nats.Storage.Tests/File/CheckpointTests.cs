using System.Diagnostics;
using System.Globalization;
using Nats.Storage.File;
using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests;

/// <summary>
/// The stream state file written while the store runs: after a power loss the open starts from the last
/// durable checkpoint and replays only what came after it, answering exactly as a full replay; a
/// checkpoint whose blocks were rewritten, cut or damaged since is not used.
/// </summary>
public sealed class CheckpointTests
{
    private static readonly TimeSpan Hour = TimeSpan.FromHours(1);

    private sealed class Run
    {
        public readonly CrashFileSystem Fs = new();
        public readonly ManualClock Clock = new();
        public readonly List<string> Warnings = [];
        public readonly SortedDictionary<ulong, (string Subject, string Data)> Live = [];
        public FileStore Store;

        public Run()
        {
            Store = Open();
        }

        // One checkpoint per hour of the manual clock: the test decides when one is due.
        public FileStoreOptions Options(bool verify = false) => CrashStores.Options(Fs, blockSize: 4096, warnings: Warnings,
            indexPageShift: 5, maxIndexBytes: 1, checkpointInterval: Hour) with
        { Clock = Clock, VerifyOnOpen = verify };

        public FileStore Open(bool verify = false) => CrashStores.Open(Options(verify));

        public void Add(int n, int from)
        {
            var tickets = new List<DurabilityTicket>();
            for (var i = from; i < from + n; i++)
            {
                var subject = "ck." + (i % 7).ToString(CultureInfo.InvariantCulture);
                var data = "message " + i.ToString(CultureInfo.InvariantCulture);
                var r = Store.StoreMsg(subject, default, System.Text.Encoding.UTF8.GetBytes(data));
                Live[r.Seq] = (subject, data);
                tickets.Add(r.Durable);
            }
            foreach (var t in tickets)
            {
                t.Wait();
            }
        }

        public void Remove(Func<ulong, bool> which)
        {
            foreach (var seq in Live.Keys.Where(which).ToArray())
            {
                Assert.True(Store.RemoveMsg(seq));
                Live.Remove(seq);
            }
            Store.WhenDurable().Wait();
        }

        /// <summary>Makes the next sync round take a checkpoint and waits until it is written.</summary>
        public void Checkpoint()
        {
            var before = Store.CheckpointsWritten;
            Clock.Advance(Hour);
            Store.SkipMsg(); // any write starts a round
            Store.WhenDurable().Wait();
            Assert.True(SpinWait.SpinUntil(() => Store.CheckpointsWritten > before, TimeSpan.FromSeconds(30)), "no checkpoint was written");
        }

        public void PowerLoss()
        {
            Fs.Crash(new Random(7), dropAllUnsynced: true);
            Store = Open();
        }

        public void Check(FileStore store)
        {
            var sm = new StoredMessage();
            var state = store.State();
            Assert.Equal((ulong)Live.Count, state.Msgs);
            Assert.Equal(Live.Keys.First(), state.FirstSeq);
            foreach (var (seq, m) in Live)
            {
                var got = store.LoadMsg(seq, sm);
                Assert.True(got is not null, $"message {seq} lost");
                Assert.Equal(m.Subject, got!.Subject);
                Assert.Equal(m.Data, System.Text.Encoding.UTF8.GetString(got.Data.Span));
            }
            var totals = store.SubjectsTotals(">");
            foreach (var g in Live.Values.GroupBy(m => m.Subject))
            {
                Assert.Equal((ulong)g.Count(), totals[g.Key]);
                Assert.Equal(Live.Last(kv => kv.Value.Subject == g.Key).Key, store.LoadLastMsg(g.Key, sm)!.Sequence);
            }
        }

        /// <summary>The same store replayed in full from its blocks must answer alike.</summary>
        public void CheckAgainstFullReplay()
        {
            var state = Store.State();
            Store.Stop();
            var full = Open(verify: true);
            Assert.False(full.OpenedFromState);
            Check(full);
            Assert.Equal(state.Bytes, full.State().Bytes);
            Assert.Equal(state.LastSeq, full.State().LastSeq);
            full.Stop();
            Store = Open();
        }
    }

    [Fact]
    public void APowerLossReplaysOnlyWhatCameAfterTheLastCheckpoint()
    {
        var run = new Run();
        run.Add(3000, 0);
        run.Remove(s => s % 11 == 3);
        run.Checkpoint();
        var blocks = run.Store.BlockPaths.Count;
        Assert.True(blocks > 20, $"{blocks} blocks");
        // After the checkpoint: more messages (filling the active block and rotating), removals of old
        // and new messages, a purge of one subject.
        run.Add(400, 3000);
        run.Remove(s => s % 13 == 5);
        run.Store.PurgeEx("ck.4", 0, 0);
        foreach (var seq in run.Live.Where(kv => kv.Value.Subject == "ck.4").Select(kv => kv.Key).ToArray())
        {
            run.Live.Remove(seq);
        }
        run.Store.WhenDurable().Wait();

        run.PowerLoss();
        Assert.True(run.Store.OpenedFromState);
        Assert.InRange(run.Store.RecoveredTailBlocks, 1, blocks / 3);
        run.Check(run.Store);
        Assert.Empty(run.Warnings);
        run.CheckAgainstFullReplay();

        // The state file stays a valid starting point: new writes and a second power loss.
        run.Add(50, 5000);
        run.PowerLoss();
        Assert.True(run.Store.OpenedFromState);
        run.Check(run.Store);
    }

    [Fact]
    public void NoCheckpointMeansAFullReplay()
    {
        var run = new Run();
        run.Add(500, 0);
        run.PowerLoss();
        Assert.False(run.Store.OpenedFromState);
        run.Check(run.Store);
    }

    [Theory]
    [InlineData("compacted")]
    [InlineData("newest listed block rewritten")]
    [InlineData("block cut")]
    [InlineData("last record flipped")]
    [InlineData("state damaged")]
    public void ACheckpointWhoseBlocksChangedIsNotUsed(string how)
    {
        var run = new Run();
        run.Add(1500, 0);
        run.Checkpoint();
        var expectWarnings = false;
        switch (how)
        {
            case "compacted":
                // Most of the oldest blocks removed: compaction deletes and rewrites them.
                run.Remove(s => s < 600 && s % 5 != 0);
                run.Store.FlushAllPending();
                run.Store.WhenDurable().Wait();
                break;
            case "newest listed block rewritten":
                {
                    // The block that was active at the checkpoint fills up and is sealed; then most of the
                    // messages it held before the checkpoint go and it is rewritten shorter.
                    var active = run.Store.BlockPaths[^1];
                    run.Add(200, 1500);
                    Assert.NotEqual(active, run.Store.BlockPaths[^1]);
                    var inOld = run.Live.Keys.Where(s => s >= 1380 && s <= 1500 && s % 4 != 0).ToArray();
                    run.Remove(s => inOld.Contains(s));
                    run.Store.FlushAllPending();
                    run.Store.WhenDurable().Wait();
                    break;
                }
            case "block cut":
                run.Fs.Crash(new Random(1), dropAllUnsynced: true);
                CutLast(run.Fs, CrashStores.BlockPath(3), 10);
                expectWarnings = true;
                break;
            case "last record flipped":
                run.Fs.Crash(new Random(1), dropAllUnsynced: true);
                FlipNearEnd(run.Fs, CrashStores.BlockPath(2));
                expectWarnings = true;
                break;
            case "state damaged":
                run.Fs.Crash(new Random(1), dropAllUnsynced: true);
                FlipNearEnd(run.Fs, Path.Combine(CrashStores.Dir, "index.db"));
                break;
        }

        if (!run.Fs.Frozen && how is "compacted" or "newest listed block rewritten")
        {
            run.PowerLoss();
        }
        else
        {
            run.Store = run.Open();
        }

        Assert.False(run.Store.OpenedFromState);
        if (expectWarnings)
        {
            // The damage is found (by the full replay, or when the damaged record is read) and reported;
            // what it cost is counted as lost.
            var sm = new StoredMessage();
            var missing = run.Live.Keys.Where(seq => run.Store.LoadMsg(seq, sm) is null).ToArray();
            Assert.NotEmpty(missing);
            Assert.NotEmpty(run.Warnings);
            Assert.True((ulong)missing.Length <= run.Store.State().Lost!.Count, $"{missing.Length} missing, {run.Store.State().Lost!.Count} reported lost");
            foreach (var seq in missing)
            {
                run.Live.Remove(seq);
            }
        }
        else
        {
            Assert.Empty(run.Warnings);
        }
        run.Check(run.Store);
    }

    private static void CutLast(CrashFileSystem fs, string path, int bytes)
    {
        using var f = fs.Open(path, Nats.Storage.IO.StoreFileMode.Open);
        f.SetLength(f.Length - bytes);
        f.Sync();
    }

    private static void FlipNearEnd(CrashFileSystem fs, string path)
    {
        using var f = fs.Open(path, Nats.Storage.IO.StoreFileMode.Open);
        var b = new byte[1];
        var at = f.Length - 6;
        f.Read(b, at);
        b[0] ^= 0x10;
        f.Write(b, at);
        f.Sync();
    }

    [Fact]
    public void ARunningStoreWritesCheckpointsOnTheSystemClock()
    {
        using var dir = new TempDir();
        var options = new FileStoreOptions { Directory = dir.Path, BlockSize = 64 * 1024, CheckpointInterval = TimeSpan.FromMilliseconds(1) };
        var store = (FileStore)StreamStores.OpenFile(new StoreConfig { Name = "CK" }, options);
        var sw = Stopwatch.StartNew();
        while (store.CheckpointsWritten == 0 && sw.Elapsed < TimeSpan.FromSeconds(30))
        {
            store.StoreMsg("a", default, new byte[100]).Durable.Wait();
        }
        Assert.True(store.CheckpointsWritten > 0);
        Assert.True(System.IO.File.Exists(Path.Combine(dir.Path, "index.db")));
        store.Stop();
    }
}
