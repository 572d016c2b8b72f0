using System.Collections.Concurrent;
using System.Diagnostics;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// An R3 stream on three real server processes while NATS.Net clients publish with PubAcks recorded: kill -9 of
/// the stream leader, then of a follower, each restarted. Afterwards every acknowledged message is in the stream
/// exactly once at its acknowledged sequence and every replica holds the same messages. The same run against Go
/// 2.9.10 checks the test itself; the longest time without a successful publish is printed for both (a measurement,
/// not an assertion).
/// </summary>
public class ReplicatedStreamFailoverTests(ITestOutputHelper output)
{
    private const int Publishers = 4;
    private const int AcksPerPhase = 150;

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task AcknowledgedMessagesSurviveLeaderAndFollowerKills(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(300));
        var all = cluster.Servers.ToList();
        await using (var admin = new NatsConnection(ReplicatedStreamTests.App(all[0])))
        {
            var created = await ReplicatedStreamTests.CreateWhenMetaReadyAsync(new NatsJSContext(admin),
                new StreamConfig("FAIL", ["fail.>"]) { NumReplicas = 3, DuplicateWindow = TimeSpan.FromMinutes(5) }, cts.Token);
            Assert.Equal(3, created.Info.Config.NumReplicas);
        }
        var leader = await LeaderAsync(all[0], cts.Token);
        // The publishers stay on a server that is never killed, so every gap is the stream's, not a reconnect's.
        var home = all.First(s => s.Name != leader);
        var run = new PublishRun();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cts.Token);
        var publishers = Enumerable.Range(0, Publishers).Select(p => run.PublishAsync(home, p, stop.Token, cts.Token)).ToList();

        await run.WaitForAcksAsync(AcksPerPhase, cts.Token);
        var killedLeader = all.Single(s => s.Name == leader);
        var leaderKilledAt = run.Elapsed;
        await killedLeader.KillAsync();
        await run.WaitForAcksAsync(run.Acked.Count + AcksPerPhase, cts.Token);
        var leaderGap = run.LongestGapSince(leaderKilledAt);
        await cluster.RestartAsync(killedLeader.Index);

        var current = await LeaderAsync(home, cts.Token);
        var follower = all.First(s => s.Name != current && s != home);
        await run.WaitForAcksAsync(run.Acked.Count + AcksPerPhase, cts.Token);
        var followerKilledAt = run.Elapsed;
        await follower.KillAsync();
        await run.WaitForAcksAsync(run.Acked.Count + AcksPerPhase, cts.Token);
        var followerGap = run.LongestGapSince(followerKilledAt);
        await cluster.RestartAsync(follower.Index);
        await run.WaitForAcksAsync(run.Acked.Count + AcksPerPhase, cts.Token);

        await stop.CancelAsync();
        await Task.WhenAll(publishers);
        output.WriteLine($"{kind}: {run.Acked.Count} acknowledged; longest time without a successful publish after the leader kill " +
            $"{leaderGap.TotalSeconds:F2} s, after the follower kill {followerGap.TotalSeconds:F2} s; publish errors {run.Errors}");
        foreach (var (error, count) in run.ErrorKinds)
        {
            output.WriteLine($"  {count} x {error}");
        }
        // The servers' warnings (a replica cutting its store back to the log's, a skipped entry) explain a failure.
        foreach (var server in all)
        {
            foreach (var line in server.PreviousLogs.Append(server.Log).SelectMany(l => l.Text.Split('\n'))
                .Where(l => l.Contains("[WRN]") && !l.Contains("Plaintext passwords")).Take(20))
            {
                output.WriteLine($"  {server.Name}: {line}");
            }
        }

        // Every acknowledged message exactly once, at its sequence, read through the leader.
        await using var reader = new NatsConnection(ReplicatedStreamTests.App(home));
        var js = new NatsJSContext(reader);
        var stream = await js.GetStreamAsync("FAIL", cancellationToken: cts.Token);
        var last = stream.Info.State.LastSeq;
        var seen = new Dictionary<string, ulong>();
        var gaps = new List<ulong>();
        for (var seq = stream.Info.State.FirstSeq; seq <= last; seq++)
        {
            StreamMsgGetResponse message;
            try
            {
                message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq }, cts.Token);
            }
            catch (NatsJSApiException e) when (e.Error.ErrCode == 10037)
            {
                gaps.Add(seq);
                continue;
            }
            var payload = System.Text.Encoding.UTF8.GetString(message.Message.Data.Span);
            Assert.True(seen.TryAdd(payload, seq), $"{payload} stored twice (seq {seen.GetValueOrDefault(payload)} and {seq})");
        }
        output.WriteLine($"{kind}: sequences {stream.Info.State.FirstSeq}-{last}, {seen.Count} messages, gaps [{string.Join(", ", gaps)}]");
        foreach (var (payload, seq) in run.Acked)
        {
            Assert.True(seen.TryGetValue(payload, out var stored), $"acknowledged {payload} (seq {seq}) missing");
            Assert.Equal(seq, stored);
        }
        await ReplicatedStreamTests.ReplicasAgreeAsync(cluster, "FAIL", stream.Info.State.Messages, cts.Token);
    }

    private static async Task<string> LeaderAsync(ClusterServer via, CancellationToken token)
    {
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(via));
        var js = new NatsJSContext(nc);
        while (true)
        {
            try
            {
                var info = await js.GetStreamAsync("FAIL", cancellationToken: token);
                if (info.Info.Cluster?.Leader is { Length: > 0 } leader)
                {
                    return leader;
                }
            }
            catch (NatsException)
            {
            }
            await Task.Delay(100, token);
        }
    }

    /// <summary>Publishers sending unique payloads (also their msg id), each retried until acknowledged.</summary>
    private sealed class PublishRun
    {
        private readonly Stopwatch _clock = Stopwatch.StartNew();
        private readonly ConcurrentQueue<TimeSpan> _ackTimes = new();
        private int _errors;

        public ConcurrentDictionary<string, ulong> Acked { get; } = new();

        public int Errors => Volatile.Read(ref _errors);

        public ConcurrentDictionary<string, int> ErrorKinds { get; } = new();

        public TimeSpan Elapsed => _clock.Elapsed;

        /// <summary>Publishes until <paramref name="stop"/>, then one last message acknowledged on the same connection: its ack
        /// follows every earlier publish of this connection into the stream (one leader takes them in order).</summary>
        public async Task PublishAsync(ClusterServer server, int publisher, CancellationToken stop, CancellationToken token)
        {
            var opts = ReplicatedStreamTests.App(server) with { RequestTimeout = TimeSpan.FromSeconds(2) };
            await using var nc = new NatsConnection(opts);
            var js = new NatsJSContext(nc);
            var i = 0;
            while (!stop.IsCancellationRequested)
            {
                await PublishOneAsync(js, publisher, $"p{publisher}-{i++}", stop);
            }
            await PublishOneAsync(js, publisher, $"p{publisher}-last", token);
        }

        private async Task PublishOneAsync(NatsJSContext js, int publisher, string payload, CancellationToken token)
        {
            while (!token.IsCancellationRequested)
            {
                try
                {
                    var ack = await js.PublishAsync($"fail.{publisher}", payload, opts: new NatsJSPubOpts { MsgId = payload }, cancellationToken: token);
                    ack.EnsureSuccess();
                    Acked[payload] = ack.Seq;
                    _ackTimes.Enqueue(_clock.Elapsed);
                    return;
                }
                catch (NatsJSDuplicateMessageException e)
                {
                    // An earlier attempt was stored though its ack was lost (the leader died, or the wait timed out).
                    Acked[payload] = e.Sequence;
                    _ackTimes.Enqueue(_clock.Elapsed);
                    return;
                }
                catch (OperationCanceledException) when (token.IsCancellationRequested)
                {
                    return;
                }
                catch (Exception e) when (e is NatsException or TimeoutException)
                {
                    Interlocked.Increment(ref _errors);
                    ErrorKinds.AddOrUpdate(e.GetType().Name + ": " + e.Message, 1, (_, n) => n + 1);
                }
            }
        }

        public async Task WaitForAcksAsync(int count, CancellationToken token)
        {
            while (Acked.Count < count)
            {
                await Task.Delay(20, token);
            }
        }

        /// <summary>The longest stretch without an ack, from <paramref name="since"/> on.</summary>
        public TimeSpan LongestGapSince(TimeSpan since)
        {
            var times = _ackTimes.Where(t => t >= since).Order().ToList();
            var longest = TimeSpan.Zero;
            var previous = since;
            foreach (var t in times)
            {
                longest = t - previous > longest ? t - previous : longest;
                previous = t;
            }
            return longest;
        }
    }
}
