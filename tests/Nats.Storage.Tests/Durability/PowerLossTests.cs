using System.Globalization;
using Nats.Storage.File;
using Nats.Storage.Tests.IO;
using Xunit.Abstractions;

namespace Nats.Storage.Tests.Durability;

/// <summary>
/// Random workloads (append batches, remove, erase, purge, purge by subject, compact, skip, the
/// background compaction pass, clean restarts) over the power-loss-simulating file system, with the
/// power failing at random file operations, in the middle of store calls and of recovery itself.
/// After every recovery: every acknowledged message is present with its exact bytes, nothing whose
/// removal was acknowledged comes back, no message appears that the model does not know, the last
/// sequence never goes backwards, no sequence handed out before the crash is handed out again, and
/// recovery never fails. The fixed seed set runs in CI; NATS_STORAGE_POWERLOSS_SEEDS=N runs N seeds
/// (NATS_STORAGE_POWERLOSS_STEPS sets the operations per seed).
/// </summary>
public sealed class PowerLossTests(ITestOutputHelper output)
{
    public static IEnumerable<object[]> Seeds()
    {
        var n = int.TryParse(Environment.GetEnvironmentVariable("NATS_STORAGE_POWERLOSS_SEEDS"), out var v) ? v : 32;
        return Enumerable.Range(1, n).Select(i => new object[] { i });
    }

    private static int Steps => int.TryParse(Environment.GetEnvironmentVariable("NATS_STORAGE_POWERLOSS_STEPS"), out var v) ? v : 800;

    [Theory]
    [MemberData(nameof(Seeds))]
    public void AcknowledgedStateSurvivesEveryPowerLoss(int seed)
    {
        var run = new PowerLossRun(seed);
        run.Execute(Steps);
        output.WriteLine(run.Summary);
        Assert.True(run.Crashes > 0);
        if (seed % 3 != 0)
        {
            Assert.True(run.CrashOpensFromState > 0, "no open after a power loss started from a checkpoint");
        }
    }
}

/// <summary>One seed's workload, model and checks.</summary>
internal sealed class PowerLossRun
{
    private readonly Random _rng;
    private readonly int _seed;
    private readonly CrashFileSystem _fs;
    private readonly FileStoreOptions _options;
    private readonly List<string> _warnings = [];

    // Acknowledged model: live messages whose store was acknowledged and whose removal was not attempted.
    private readonly SortedDictionary<ulong, (string Subject, byte[] Data)> _live = [];
    private readonly HashSet<ulong> _gone = [];

    // The operation in flight when the power failed: stores that may or may not have happened, and
    // sequences whose removal may or may not have happened.
    private readonly Dictionary<ulong, (string Subject, byte[] Data)> _maybeStored = [];
    private readonly HashSet<ulong> _maybeRemoved = [];

    private FileStore _store;
    private ulong _maxHandedOut;
    private ulong _ackedLast;

    public PowerLossRun(int seed)
    {
        _seed = seed;
        _rng = new Random(seed);
        _fs = new CrashFileSystem(pageSize: _rng.Next(2) == 0 ? 512 : 4096);
        _options = CrashStores.Options(_fs, blockSize: _rng.Next(6, 40) * 128,
            reserve: (ulong)_rng.Next(4, 200), mode: _rng.Next(3) == 0 ? FileWriteMode.Buffered : FileWriteMode.WriteThrough,
            warnings: _warnings, indexPageShift: 2 + seed % 5, maxIndexBytes: seed % 2 == 0 ? 1 : 8 << 20,
            // Two seeds in three take a stream state checkpoint at every sync round, so power losses hit
            // checkpoints being written and opens replay from them.
            checkpointInterval: seed % 3 == 0 ? TimeSpan.FromSeconds(1) : TimeSpan.Zero)
            // One seed in four writes per-message block indexes (the others seal blocks with a summary only, the
            // default: full replays and index rebuilds walk the blocks).
            with
        { BlockIndexes = seed % 4 == 1 };
        _store = CrashStores.Open(_options);
    }

    public int Crashes { get; private set; }
    public int Recoveries { get; private set; }
    public int CrashOpensFromState { get; private set; }

    public string Summary => $"seed {_seed}: {Crashes} power losses, {Recoveries} recoveries, {_live.Count} live, last {_ackedLast}, {_warnings.Count} warnings, {CrashOpensFromState} opens after a power loss from a state file";

    public void Execute(int steps)
    {
        for (var step = 0; step < steps; step++)
        {
            if (_rng.Next(4) == 0)
            {
                _fs.FreezeAfter(_rng.Next(0, 30)); // the power fails somewhere in the next operations
            }

            try
            {
                RandomOperation();
            }
            catch (Exception) when (_fs.Frozen)
            {
            }
            if (!_fs.Frozen)
            {
                _fs.FreezeAfter(-1); // the operation finished before the power failed
            }

            if (_fs.Frozen || _rng.Next(30) == 0)
            {
                PowerLoss();
            }
            else if (_rng.Next(60) == 0)
            {
                CleanRestart();
            }
        }
        PowerLoss();
    }

    private void RandomOperation()
    {
        var op = _rng.Next(100);
        if (op < 55)
        {
            StoreBatch();
        }
        else if (op < 75)
        {
            Remove(erase: op < 58);
        }
        else if (op < 78)
        {
            Bulk(() => _store.Purge(), _ => true);
        }
        else if (op < 82)
        {
            var subject = Subject();
            Bulk(() => _store.PurgeEx(subject, 0, 0), m => m.Subject == subject);
        }
        else if (op < 86)
        {
            var floor = _live.Count == 0 ? 1 : _live.Keys.ElementAt(_rng.Next(_live.Count));
            Bulk(() => _store.Compact(floor), _ => false, floor);
        }
        else if (op < 90)
        {
            var seq = _store.SkipMsg();
            _maxHandedOut = Math.Max(_maxHandedOut, seq);
            Ack();
        }
        else
        {
            _store.FlushAllPending(); // block deletion and compaction pass
            Ack();
        }
    }

    private string Subject() => "pl." + _rng.Next(5).ToString(CultureInfo.InvariantCulture);

    private void StoreBatch()
    {
        var n = _rng.Next(1, 9);
        var tickets = new List<(ulong Seq, DurabilityTicket Ticket)>();
        for (var i = 0; i < n; i++)
        {
            var subject = Subject();
            var data = new byte[_rng.Next(0, 300)];
            _rng.NextBytes(data);
            var r = _store.StoreMsg(subject, default, data);
            _maxHandedOut = Math.Max(_maxHandedOut, r.Seq);
            _maybeStored[r.Seq] = (subject, data);
            tickets.Add((r.Seq, r.Durable));
        }
        foreach (var (seq, ticket) in tickets)
        {
            ticket.Wait();
            _live[seq] = _maybeStored[seq];
            _maybeStored.Remove(seq);
            _ackedLast = Math.Max(_ackedLast, seq);
        }
    }

    private void Remove(bool erase)
    {
        if (_live.Count == 0)
        {
            return;
        }

        var seq = _live.Keys.ElementAt(_rng.Next(_live.Count));
        _maybeRemoved.Add(seq);
        var removed = erase ? _store.EraseMsg(seq) : _store.RemoveMsg(seq);
        if (!removed)
        {
            throw new InvalidOperationException($"seed {_seed}: message {seq} should have been there to remove");
        }

        Ack();
    }

    private void Bulk(Func<ulong> op, Func<(string Subject, byte[] Data), bool> matches, ulong below = 0)
    {
        foreach (var (seq, m) in _live)
        {
            if (matches(m) || seq < below)
            {
                _maybeRemoved.Add(seq);
            }
        }
        op();
        Ack();
    }

    /// <summary>Waits until everything done so far is durable, then folds the in-flight operation into the model.</summary>
    private void Ack()
    {
        _store.WhenDurable().Wait();
        foreach (var seq in _maybeRemoved)
        {
            if (_live.Remove(seq))
            {
                _gone.Add(seq);
            }
        }
        _maybeRemoved.Clear();
        _ackedLast = Math.Max(_ackedLast, _store.State().LastSeq);
    }

    private void CleanRestart()
    {
        _store.Stop();
        _store = CrashStores.Open(_options);
        Recoveries++;
        Verify("clean restart");
    }

    private void PowerLoss()
    {
        Crashes++;
        _fs.Crash(_rng);
        // The power may fail again while recovering; each attempt must leave something recoverable.
        while (true)
        {
            if (_rng.Next(6) == 0)
            {
                _fs.FreezeAfter(_rng.Next(0, 20));
            }

            try
            {
                _store = CrashStores.Open(_options);
                if (_fs.Frozen)
                {
                    throw new IOException("frozen");
                }

                break;
            }
            catch (Exception) when (_fs.Frozen)
            {
                Crashes++;
                _fs.Crash(_rng);
            }
        }
        _fs.FreezeAfter(-1);
        Recoveries++;
        CrashOpensFromState += _store.OpenedFromState ? 1 : 0;
        Verify("power loss");
    }

    private void Verify(string after)
    {
        var where = $"seed {_seed}, recovery {Recoveries} ({after}; warnings: {string.Join(" | ", _warnings.TakeLast(6))})";
        var sm = new StoredMessage();
        foreach (var (seq, m) in _live.ToArray())
        {
            var got = _store.LoadMsg(seq, sm);
            if (got is null && _maybeRemoved.Contains(seq))
            {
                _live.Remove(seq);
                _gone.Add(seq);
                continue;
            }
            Assert.True(got is not null, $"{where}: acknowledged message {seq} lost");
            Assert.Equal(m.Subject, got!.Subject);
            Assert.True(m.Data.AsSpan().SequenceEqual(got.Data.Span), $"{where}: message {seq} damaged");
        }
        foreach (var seq in _gone)
        {
            Assert.True(_store.LoadMsg(seq, sm) is null, $"{where}: removed message {seq} came back");
        }

        foreach (var (seq, m) in _maybeStored)
        {
            var got = _store.LoadMsg(seq, sm);
            if (got is null)
            {
                continue;
            }

            Assert.True(m.Data.AsSpan().SequenceEqual(got.Data.Span) && got.Subject == m.Subject, $"{where}: unacknowledged message {seq} present but damaged");
            if (!_maybeRemoved.Contains(seq))
            {
                _live[seq] = m;
            }
        }
        foreach (var seq in _maybeRemoved)
        {
            if (_store.LoadMsg(seq, sm) is null && _live.Remove(seq))
            {
                _gone.Add(seq);
            }
        }
        _maybeStored.Clear();
        _maybeRemoved.Clear();
        // After the loads: a record that fails its checksum on read leaves the index then.
        var state = _store.State();
        Assert.Equal((ulong)_live.Count, state.Msgs);
        // Per-subject totals come from the state file and what was replayed after it.
        var totals = _store.SubjectsTotals(">");
        foreach (var group in _live.Values.GroupBy(m => m.Subject))
        {
            Assert.True(totals.TryGetValue(group.Key, out var n) && n == (ulong)group.Count(), $"{where}: subject {group.Key} counts {n}, expected {group.Count()}");
        }
        Assert.True(_live.Values.Select(m => m.Subject).Distinct().Count() == totals.Count,
            $"{where}: subjects {string.Join(",", totals.Select(kv => kv.Key + "=" + kv.Value))}, model {string.Join(",", _live.Values.GroupBy(m => m.Subject).Select(g => g.Key + "=" + g.Count()))}");
        Assert.True(state.LastSeq >= _ackedLast, $"{where}: last sequence went back from {_ackedLast} to {state.LastSeq}");
        var next = _store.StoreMsg("pl.after", default, [1, 2, 3]);
        Assert.True(next.Seq > _maxHandedOut, $"{where}: sequence {next.Seq} handed out again (up to {_maxHandedOut} before)");
        next.Durable.Wait();
        _live[next.Seq] = ("pl.after", [1, 2, 3]);
        _maxHandedOut = next.Seq;
        _ackedLast = Math.Max(_ackedLast, next.Seq);
    }
}
