using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Nats.Server.IntegrationTests.Cluster;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Interest races across routes (issue 21, "Beyond the Go server"): while a publisher on A publishes without pause,
/// many connections on the other servers subscribe and unsubscribe the same subjects as fast as they can. A
/// subscriber that stays subscribed throughout must get every message once, in order (a withdrawn duplicate
/// interest must not take the route's interest with it); afterwards A must hold exactly the interest that exists,
/// each remaining subscription must get every later message once, and no unsubscribed sid may get anything.
/// </summary>
public sealed class InterestRaceTests(ITestOutputHelper output)
{
    private const int SubjectsPerKind = 4;
    private const int ChurnersPerServer = 16;
    private const int FinalBatch = 100;
    private static readonly TimeSpan ChurnTime = TimeSpan.FromSeconds(3);

    public static TheoryData<string> Topologies => new() { "ours,ours", "ours,ours,ours", "go,ours", "ours,go", "go,go", "go,go,go" };

    [Theory]
    [MemberData(nameof(Topologies))]
    public async Task NoMessageLostOrExtraWhileInterestChurns(string topology)
    {
        await using var cluster = await TestCluster.StartAsync(topology.Split(','));
        var publisherServer = cluster[0];
        var subscriberServers = cluster.Servers.Skip(1).ToList();
        string[] stableSubjects = [.. Enumerable.Range(0, SubjectsPerKind).Select(k => $"race.{k}")];
        string[] churnSubjects = [.. Enumerable.Range(0, SubjectsPerKind).Select(k => $"churn.{k}")];
        string[] allSubjects = [.. stableSubjects, .. churnSubjects];

        // One stable subscriber per subscriber server, on every race.* subject, from start to end.
        var stable = new List<StableSubscriber>();
        foreach (var server in subscriberServers)
        {
            stable.Add(await StableSubscriber.StartAsync(server, stableSubjects));
        }
        using var cts = new CancellationTokenSource(TestCluster.Deadline * 2);
        foreach (var server in subscriberServers)
        {
            await TestCluster.WaitForAsync(async () => stableSubjects.All((await publisherServer.RouteSubjectsFromAsync(server, cts.Token)).Contains),
                $"{publisherServer} knows {server}'s stable interest", cts.Token);
        }

        var churners = new List<Churner>();
        foreach (var server in subscriberServers)
        {
            for (var i = 0; i < ChurnersPerServer; i++)
            {
                churners.Add(await Churner.StartAsync(server, churners.Count));
            }
        }
        await using var publisher = await WireClient.ConnectAsync(publisherServer.ClientPort);
        var published = new long[allSubjects.Length];
        long seq = 0;

        // Publish and churn at once.
        var churnUntil = DateTime.UtcNow + ChurnTime;
        var churning = churners.Select(c => Task.Run(() => c.ChurnAsync(allSubjects, churnUntil))).ToList();
        var publishing = Task.Run(async () =>
        {
            var batch = new StringBuilder();
            while (churning.Any(t => !t.IsCompleted))
            {
                batch.Clear();
                for (var i = 0; i < 64; i++)
                {
                    var k = (int)(seq % allSubjects.Length);
                    var payload = seq.ToString(CultureInfo.InvariantCulture);
                    batch.Append(CultureInfo.InvariantCulture, $"PUB {allSubjects[k]} {payload.Length}\r\n{payload}\r\n");
                    published[k]++;
                    seq++;
                }
                await publisher.SendAsync(batch.ToString());
                await publisher.PingAsync();
            }
        });
        await Task.WhenAll(churning);
        await publishing;

        // Final state: every third churner holds one race.* and one of churn.0/churn.1; churn.2 and churn.3 have no one.
        foreach (var churner in churners)
        {
            await churner.SettleAsync(churner.Index % 3 == 0 ? [stableSubjects[churner.Index % SubjectsPerKind], churnSubjects[churner.Index % 2]] : []);
        }
        foreach (var server in subscriberServers)
        {
            var expected = churners.Any(c => c.Server == server && c.Index % 3 == 0)
                ? stableSubjects.Concat(churnSubjects.Take(2)).Append("fence").Order().ToList()
                : stableSubjects.Append("fence").Order().ToList();
            List<string> held = [];
            try
            {
                await TestCluster.WaitForAsync(async () =>
                {
                    held = [.. (await publisherServer.RouteSubjectsFromAsync(server, cts.Token)).Where(s => !s.StartsWith('$')).Order()];
                    return held.SequenceEqual(expected);
                }, $"{publisherServer} holds exactly {server}'s interest", cts.Token);
            }
            catch (TimeoutException)
            {
                Assert.Fail($"{topology}: {publisherServer} holds [{string.Join(", ", held)}] for {server}, which has [{string.Join(", ", expected)}]\n{cluster.Logs()}");
            }
        }

        // A final batch on every subject, then a fence every connection is subscribed to: past it, nothing is in flight.
        var final = new StringBuilder();
        for (var i = 0; i < FinalBatch * allSubjects.Length; i++)
        {
            var k = (int)(seq % allSubjects.Length);
            var payload = seq.ToString(CultureInfo.InvariantCulture);
            final.Append(CultureInfo.InvariantCulture, $"PUB {allSubjects[k]} {payload.Length}\r\n{payload}\r\n");
            published[k]++;
            seq++;
        }
        var finalFrom = seq - FinalBatch * allSubjects.Length;
        final.Append("PUB fence 3\r\nend\r\n");
        await publisher.SendAsync(final.ToString());
        await publisher.PingAsync();
        await Task.WhenAll(stable.Select(s => s.Fenced.Task.WaitAsync(cts.Token)).Concat(churners.Select(c => c.Fenced.Task.WaitAsync(cts.Token))));

        var report = new List<string>();
        foreach (var s in stable)
        {
            for (var k = 0; k < SubjectsPerKind; k++)
            {
                if (s.Received[k] != published[k] || s.OutOfOrder[k] > 0)
                {
                    report.Add($"stable subscriber on {s.Server}: {stableSubjects[k]} {s.Received[k]} of {published[k]}, {s.OutOfOrder[k]} out of order or repeated");
                }
            }
        }
        foreach (var c in churners)
        {
            report.AddRange(c.Problems(finalFrom, FinalBatch));
        }
        var lost = report.Count;
        output.WriteLine($"{topology}: {seq} messages published, {churners.Sum(c => c.Operations)} SUB/UNSUB by {churners.Count} connections, {lost} problems");
        foreach (var line in report.Take(40))
        {
            output.WriteLine(line);
        }
        Assert.True(report.Count == 0, $"{topology}: {report.Count} problems:\n{string.Join("\n", report.Take(40))}\n{cluster.Logs()}");
        foreach (var c in churners)
        {
            await c.DisposeAsync();
        }
        foreach (var s in stable)
        {
            await s.DisposeAsync();
        }
    }

    /// <summary>Subscribed to every race.* subject (sid k+1) and the fence (sid "f") from start to end.</summary>
    private sealed class StableSubscriber : IAsyncDisposable
    {
        private readonly long[] _last = new long[SubjectsPerKind];
        private WireClient _client = null!;

        public ClusterServer Server { get; private init; } = null!;
        public long[] Received { get; } = new long[SubjectsPerKind];
        public long[] OutOfOrder { get; } = new long[SubjectsPerKind];
        public TaskCompletionSource Fenced { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public static async Task<StableSubscriber> StartAsync(ClusterServer server, string[] subjects)
        {
            var s = new StableSubscriber { Server = server };
            Array.Fill(s._last, -1);
            s._client = await WireClient.ConnectAsync(server.ClientPort, s.OnMessage);
            var subs = new StringBuilder("SUB fence f\r\n");
            for (var k = 0; k < subjects.Length; k++)
            {
                subs.Append(CultureInfo.InvariantCulture, $"SUB {subjects[k]} {k + 1}\r\n");
            }
            await s._client.SendAsync(subs.ToString());
            await s._client.PingAsync();
            return s;
        }

        private void OnMessage(string subject, string sid, string payload)
        {
            if (sid == "f")
            {
                Fenced.TrySetResult();
                return;
            }
            var k = int.Parse(sid, CultureInfo.InvariantCulture) - 1;
            var n = long.Parse(payload, CultureInfo.InvariantCulture);
            if (n <= _last[k])
            {
                OutOfOrder[k]++;
            }
            _last[k] = n;
            Received[k]++;
        }

        public ValueTask DisposeAsync() => _client.DisposeAsync();
    }

    /// <summary>One connection subscribing and unsubscribing at random, each SUB with a new sid.</summary>
    private sealed class Churner : IAsyncDisposable
    {
        private readonly ConcurrentDictionary<string, ConcurrentDictionary<long, int>> _bySid = new();
        private readonly Dictionary<string, string> _finalSids = [];
        private readonly HashSet<string> _closedSids = [];
        private WireClient _client = null!;
        private int _nextSid;
        private volatile bool _settled;
        private long _extrasAfterSettle;

        public int Index { get; private init; }
        public ClusterServer Server { get; private init; } = null!;
        public int Operations { get; private set; }
        public TaskCompletionSource Fenced { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public static async Task<Churner> StartAsync(ClusterServer server, int index)
        {
            var c = new Churner { Index = index, Server = server };
            c._client = await WireClient.ConnectAsync(server.ClientPort, c.OnMessage);
            await c._client.SendAsync("SUB fence f\r\n");
            await c._client.PingAsync();
            return c;
        }

        private void OnMessage(string subject, string sid, string payload)
        {
            if (sid == "f")
            {
                Fenced.TrySetResult();
                return;
            }
            if (_settled && !_finalSids.ContainsValue(sid))
            {
                Interlocked.Increment(ref _extrasAfterSettle);
            }
            var seen = _bySid.GetOrAdd(sid, _ => new ConcurrentDictionary<long, int>());
            seen.AddOrUpdate(long.Parse(payload, CultureInfo.InvariantCulture), 1, (_, n) => n + 1);
        }

        public async Task ChurnAsync(string[] subjects, DateTime until)
        {
            var random = new Random(Index);
            var open = new List<string>();
            var batch = new StringBuilder();
            while (DateTime.UtcNow < until)
            {
                batch.Clear();
                for (var i = 0; i < 8; i++)
                {
                    if (open.Count > 0 && (open.Count > 3 || random.Next(2) == 0))
                    {
                        var sid = open[random.Next(open.Count)];
                        open.Remove(sid);
                        _closedSids.Add(sid);
                        batch.Append(CultureInfo.InvariantCulture, $"UNSUB {sid}\r\n");
                    }
                    else
                    {
                        var sid = (++_nextSid).ToString(CultureInfo.InvariantCulture);
                        open.Add(sid);
                        batch.Append(CultureInfo.InvariantCulture, $"SUB {subjects[random.Next(subjects.Length)]} {sid}\r\n");
                    }
                    Operations++;
                }
                await _client.SendAsync(batch.ToString());
                if (random.Next(4) == 0)
                {
                    await _client.PingAsync();
                }
            }
            foreach (var sid in open)
            {
                _closedSids.Add(sid);
                await _client.SendAsync($"UNSUB {sid}\r\n");
            }
            await _client.PingAsync();
        }

        /// <summary>Ends holding exactly <paramref name="subjects"/>, each under a fresh sid.</summary>
        public async Task SettleAsync(string[] subjects)
        {
            foreach (var subject in subjects)
            {
                var sid = (++_nextSid).ToString(CultureInfo.InvariantCulture);
                _finalSids[subject] = sid;
                await _client.SendAsync($"SUB {subject} {sid}\r\n");
            }
            await _client.PingAsync();
            _settled = true;
        }

        public IEnumerable<string> Problems(long finalFrom, int finalBatch)
        {
            foreach (var (sid, seen) in _bySid)
            {
                foreach (var (n, count) in seen)
                {
                    if (count > 1)
                    {
                        yield return $"churner {Index} on {Server}: sid {sid} got message {n} {count} times";
                    }
                }
            }
            if (_extrasAfterSettle > 0)
            {
                yield return $"churner {Index} on {Server}: {_extrasAfterSettle} messages for unsubscribed sids after its UNSUBs were acknowledged";
            }
            foreach (var (subject, sid) in _finalSids)
            {
                var got = _bySid.TryGetValue(sid, out var seen) ? seen.Keys.Count(n => n >= finalFrom) : 0;
                if (got != finalBatch)
                {
                    yield return $"churner {Index} on {Server}: {subject} (sid {sid}) got {got} of the final {finalBatch}";
                }
            }
        }

        public ValueTask DisposeAsync() => _client.DisposeAsync();
    }
}
