using System.Globalization;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.JetStream.PowerLoss;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>The faults a trial injects into a cluster whose every server holds a replica of the stream.</summary>
internal enum ClusterFault
{
    /// <summary>kill -9 of the stream leader, restarted once publishing resumed elsewhere.</summary>
    LeaderKill,

    /// <summary>kill -9 of a follower while publishing, restarted.</summary>
    FollowerKill,

    /// <summary>SIGSTOP of the stream leader until the others elected a new one and publishing resumed, then SIGCONT.</summary>
    LeaderPause,

    /// <summary>Every route of the stream leader cut (through the route proxies) until publishing resumed elsewhere, then healed.</summary>
    LeaderPartition,

    /// <summary>Each server in turn stopped (SIGINT) and started again.</summary>
    RollingRestart,

    /// <summary>The stream leader, its store on the power-cut file system, killed and its unsynced writes dropped, then restarted.</summary>
    PowerCut,

    /// <summary>Every server, each store on its own power-cut file system, killed and its unsynced writes dropped, then all restarted.</summary>
    PowerCutAll,
}

/// <summary>
/// One Jepsen-style trial: three or five servers (all Go 2.9.10 or all ours) with an R3 or R5 file stream,
/// asynchronous publishers of three client libraries on every server recording each PubAck, a durable consumer
/// draining, a fault injected mid-run while publishing goes on, the fault healed, then every replica's own store
/// compared with the acknowledgements and the consumer's deliveries (<see cref="TrialResult"/>).
/// </summary>
internal sealed class FaultTrial(string kind, ClusterFault fault, int trial, Action<string> log, int servers = 3)
{
    public const string Stream = "JEP";

    /// <summary>Acknowledgements to wait for in each phase (before the fault, during it, after the heal).</summary>
    public int Phase { get; init; } = 1500;

    /// <summary>The least time each phase lasts (a fault held for less would test little).</summary>
    public TimeSpan PhaseTime { get; init; } = TimeSpan.FromSeconds(3);

    /// <summary>Publishes in flight per connection (one connection per server).</summary>
    public int InFlight { get; init; } = 8;

    public static readonly TimeSpan ConvergeTimeout = TimeSpan.FromSeconds(30);

    /// <summary>How long publishing may take to resume after the fault was healed.</summary>
    public static readonly TimeSpan ResumeTimeout = TimeSpan.FromSeconds(120);

    /// <summary>How long the consumer may take, once publishing stopped and the replicas agree, to deliver the rest.</summary>
    public static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(60);

    private const int PowerCutServer = 2;

    /// <summary>The trial's name in results: the fault, and the cluster size when it is not three.</summary>
    private string Name => servers == 3 ? fault.ToString() : $"{fault}/{servers}";

    public async Task<TrialResult> RunAsync(CancellationToken token)
    {
        var mounts = new Dictionary<int, PowerCutMount>();
        try
        {
            foreach (var i in Enumerable.Range(0, servers).Where(i => fault == ClusterFault.PowerCutAll || (fault == ClusterFault.PowerCut && i == PowerCutServer)))
            {
                mounts[i] = await PowerCutMount.StartAsync();
            }
            return await RunAsync(mounts, token);
        }
        finally
        {
            foreach (var mount in mounts.Values)
            {
                await mount.DisposeAsync();
            }
        }
    }

    private async Task<TrialResult> RunAsync(Dictionary<int, PowerCutMount> mounts, CancellationToken token)
    {
        var spec = ReplicatedStreamTests.Spec(Enumerable.Repeat(kind, servers).ToArray()) with
        {
            StoreDirOf = i => mounts.TryGetValue(i, out var mount) ? Path.Combine(mount.MountPoint, "store") : null,
            // Ours compacts the stream's log every 1,000 entries instead of 65,536, so that every trial compacts many
            // times and a replica that was down or cut off comes back behind the others' snapshots.
            Environment = kind == "ours" ? new Dictionary<string, string> { ["NATS_TEST_STREAM_COMPACT_ENTRIES"] = "1000" } : new Dictionary<string, string>(),
            ExtraArgs = Environment.GetEnvironmentVariable("NATS_FAULT_LOGS") is { Length: > 0 } ? ["-D"] : [],
        };
        await using var cluster = await TestCluster.StartAsync(spec);
        try
        {
            return await RunAsync(cluster, mounts, token);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            throw new InvalidOperationException($"{kind} {Name} trial {trial} failed: {e.Message}\n{cluster.Logs()}", e);
        }
    }

    private async Task<TrialResult> RunAsync(TestCluster cluster, Dictionary<int, PowerCutMount> mounts, CancellationToken token)
    {
        var all = cluster.Servers;
        await using (var admin = new NatsConnection(ReplicatedStreamTests.App(all[0])))
        {
            var config = new StreamConfig(Stream, [FaultPublishers.Subject + ".>"]) { NumReplicas = servers, DuplicateWindow = TimeSpan.FromMinutes(5) };
            while (true)
            {
                try
                {
                    await ReplicatedStreamTests.CreateWhenMetaReadyAsync(new NatsJSContext(admin), config, token);
                    break;
                }
                catch (NatsJSApiException e) when (e.Error.ErrCode == 10005)
                {
                    // Go's meta leader places only on peers it has heard from: "no suitable peers" until all have reported.
                    await Task.Delay(200, token);
                }
            }
        }
        var note = "";
        if (fault == ClusterFault.PowerCut)
        {
            note = await MoveLeaderToAsync(cluster, all[PowerCutServer], token);
        }
        await using var drain = await FaultConsumer.StartAsync(all[1], Stream, token);
        await using var publishers = new FaultPublishers();
        await publishers.StartAsync(all, InFlight, token);
        await publishers.WaitForAcksAsync(Phase, token);

        var faultAt = publishers.Elapsed;
        var leader = await LeaderAsync(cluster, token);
        log($"{kind} {Name} #{trial}: fault at {faultAt.TotalSeconds:F1} s, {publishers.Acked.Count} acked, leader {leader}");
        switch (fault)
        {
            case ClusterFault.LeaderKill:
                await leader.KillAsync();
                await publishers.WaitForMoreAcksAsync(Phase, PhaseTime, token);
                await cluster.RestartAsync(leader.Index);
                break;
            case ClusterFault.FollowerKill:
                var follower = all.First(s => s != leader);
                await follower.KillAsync();
                await publishers.WaitForMoreAcksAsync(Phase, PhaseTime, token);
                await cluster.RestartAsync(follower.Index);
                break;
            case ClusterFault.LeaderPause:
                leader.Pause();
                try
                {
                    // Acknowledgements resume only once the other two elected a leader: the pause outlasted the election timeout.
                    await publishers.WaitForMoreAcksAsync(Phase, PhaseTime, token);
                }
                finally
                {
                    leader.Resume();
                }
                break;
            case ClusterFault.LeaderPartition:
                cluster.Isolate(leader.Index);
                await publishers.WaitForMoreAcksAsync(Phase, PhaseTime, token);
                cluster.Heal();
                await cluster.WaitForMeshAsync();
                break;
            case ClusterFault.RollingRestart:
                foreach (var server in all)
                {
                    var stopping = publishers.Elapsed;
                    await server.StopAsync();
                    var stopped = publishers.Elapsed;
                    await cluster.RestartAsync(server.Index);
                    var started = publishers.Elapsed;
                    await cluster.WaitForMeshAsync();
                    log($"{kind} {fault} #{trial}: {server} stopping at {stopping.TotalSeconds:F2} s, stopped {stopped.TotalSeconds:F2} s, " +
                        $"started {started.TotalSeconds:F2} s, mesh {publishers.Elapsed.TotalSeconds:F2} s");
                    await publishers.WaitForMoreAcksAsync(Phase / 2, PhaseTime / 2, token);
                }
                break;
            case ClusterFault.PowerCut:
                // The server on the power-cut file system (the leader, unless it could not be made one: see the note).
                var victim = all[PowerCutServer];
                await victim.KillAsync();
                await mounts[PowerCutServer].CutAsync();
                await cluster.RestartAsync(victim.Index);
                break;
            case ClusterFault.PowerCutAll:
                foreach (var server in all)
                {
                    await server.KillAsync();
                }
                foreach (var mount in mounts.Values)
                {
                    await mount.CutAsync();
                }
                foreach (var server in all)
                {
                    await cluster.RestartAsync(server.Index);
                }
                await cluster.WaitForMeshAsync();
                break;
        }
        var resumed = true;
        try
        {
            await publishers.WaitForMoreAcksAsync(Phase, PhaseTime, token).WaitAsync(ResumeTimeout, token);
        }
        catch (TimeoutException) when (kind == "go")
        {
            // Reported, not failed: after a power cut of every server Go 2.9.10 may not serve the stream again.
            resumed = false;
            note = $"publishing did not resume within {ResumeTimeout.TotalSeconds:F0} s after the fault";
        }
        var stopAt = publishers.Elapsed;
        await publishers.StopAsync(token, resumed ? null : TimeSpan.FromSeconds(5));
        var (gapStart, gap) = publishers.LongestGapAt(faultAt, stopAt);
        log($"{kind} {Name} #{trial}: longest gap {gap.TotalSeconds:F2} s from {gapStart.TotalSeconds:F2} s (at {DateTime.UtcNow - (publishers.Elapsed - gapStart):HH:mm:ss.fff} UTC)");
        if (Environment.GetEnvironmentVariable("NATS_FAULT_LOGS") is { Length: > 0 } logs)
        {
            // Opt-in: the servers' logs of every trial, to find what a pause was waiting for.
            File.WriteAllText(Path.Combine(logs, $"{kind}-{Name.Replace('/', '-')}-{trial}.log"), string.Join("\n", all.Select(s =>
                $"--- {s} ---\n{string.Concat(s.PreviousLogs.Select(l => l.Text + "\n--- restarted ---\n"))}{s.Log.Text}")));
        }
        log($"{kind} {Name} #{trial}: publishing stopped at {stopAt.TotalSeconds:F1} s, {publishers.Acked.Count} acked, errors " +
            string.Join(", ", publishers.ErrorKinds.Select(e => $"{e.Value} x {e.Key}")));

        await cluster.WaitForMeshAsync();
        var converged = await ConvergeAsync(cluster, token);
        var missed = await drain.WaitForAsync(publishers.Acked, DrainTimeout, token);
        await drain.DisposeAsync();
        if (missed.Count > 0)
        {
            log($"{kind} {Name} #{trial}: the consumer missed {missed.Count} acknowledged messages, first " +
                string.Join(", ", missed.Select(m => $"{m}@{publishers.Acked[m]}").Order().Take(10)));
        }
        foreach (var server in all)
        {
            await server.StopAsync();
        }
        var replicas = new List<ReplicaContents>();
        foreach (var server in all)
        {
            replicas.Add(await ReplicaContents.ReadAsync(server, Stream, token));
        }
        var result = TrialResult.Compare(kind, Name, trial, publishers.Acked, replicas) with
        {
            Converged = converged,
            ConsumerMissed = missed.Count,
            MaxGapSeconds = Math.Round(gap.TotalSeconds, 2),
            PublishErrors = publishers.Errors,
            Note = note,
        };
        log(result.ToString());
        if (!result.Clean)
        {
            log(Differences(publishers.Acked, replicas));
        }
        result.Save();
        return result;
    }

    /// <summary>Waits (bounded) until every server's replica holds as many messages and bytes as the others.</summary>
    private static async Task<bool> ConvergeAsync(TestCluster cluster, CancellationToken token)
    {
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(token);
        cts.CancelAfter(ConvergeTimeout);
        try
        {
            await TestCluster.WaitForAsync(async () =>
            {
                var states = new List<(int, long, long)>();
                foreach (var server in cluster.Servers)
                {
                    states.Add(await ReplicatedStreamTests.ReplicaStateAsync(server, cts.Token));
                }
                return states.Distinct().Count() == 1 && states[0].Item1 == 1;
            }, "replicas agree", cts.Token);
            return true;
        }
        catch (TimeoutException) when (!token.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>The current stream leader, asked through any running server until one names it.</summary>
    internal static async Task<ClusterServer> LeaderAsync(TestCluster cluster, CancellationToken token)
    {
        while (true)
        {
            foreach (var server in cluster.Servers.Where(s => s.IsRunning))
            {
                try
                {
                    await using var nc = new NatsConnection(ReplicatedStreamTests.App(server) with { RequestTimeout = TimeSpan.FromSeconds(2) });
                    var info = await new NatsJSContext(nc).GetStreamAsync(Stream, cancellationToken: token);
                    if (info.Info.Cluster?.Leader is { Length: > 0 } name && cluster.Servers.FirstOrDefault(s => s.Name == name) is { } leader)
                    {
                        return leader;
                    }
                }
                catch (NatsException)
                {
                }
            }
            await Task.Delay(100, token);
        }
    }

    /// <summary>Steps the stream leader down until <paramref name="target"/> leads (bounded); says where it ended.</summary>
    private static async Task<string> MoveLeaderToAsync(TestCluster cluster, ClusterServer target, CancellationToken token)
    {
        for (var attempt = 0; attempt < 12; attempt++)
        {
            var leader = await LeaderAsync(cluster, token);
            if (leader == target)
            {
                return "";
            }
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(leader));
            try
            {
                await nc.RequestAsync<string, string>($"$JS.API.STREAM.LEADER.STEPDOWN.{Stream}", "", cancellationToken: token);
            }
            catch (NatsException)
            {
            }
            await TestCluster.WaitForAsync(async () => await LeaderAsync(cluster, token) != leader, "a new stream leader", token);
        }
        return $"power cut of a follower ({target.Name}): the leadership did not move to it";
    }

    /// <summary>Where the replicas and the acknowledgements disagree, first few of each kind (for a failure's output).</summary>
    private static string Differences(IReadOnlyDictionary<string, ulong> acked, IReadOnlyList<ReplicaContents> replicas)
    {
        var lines = new List<string>();
        foreach (var replica in replicas)
        {
            var held = replica.Messages.GroupBy(m => m.Value).ToDictionary(g => g.Key, g => g.Select(m => m.Key).ToList());
            var missing = acked.Where(a => !held.ContainsKey(a.Key)).OrderBy(a => a.Value).Take(10).Select(a => $"{a.Key}@{a.Value}");
            var moved = acked.Where(a => held.TryGetValue(a.Key, out var at) && !at.Contains(a.Value)).Take(10)
                .Select(a => $"{a.Key}@{a.Value}->{string.Join("/", held[a.Key])}");
            lines.Add(string.Create(CultureInfo.InvariantCulture,
                $"  {replica.Server}: missing [{string.Join(", ", missing)}], moved [{string.Join(", ", moved)}]"));
        }
        var first = replicas[0].Messages;
        foreach (var other in replicas.Skip(1))
        {
            var differ = first.Keys.Union(other.Messages.Keys).Where(k => first.GetValueOrDefault(k) != other.Messages.GetValueOrDefault(k)).Order().ToList();
            if (differ.Count > 0)
            {
                lines.Add($"  {replicas[0].Server} vs {other.Server}: {differ.Count} sequences differ, first {differ[0]}, last {differ[^1]}");
            }
        }
        return string.Join("\n", lines);
    }
}
