using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Faults on real processes, with NATS.Net clients: a server frozen (SIGSTOP) past the route ping interval and
/// thawed, a link cut and restored, a server killed (-9) and restarted under its clients, a client failing over
/// to a server it learnt from connect_urls. After each, traffic flows again and interest is re-synced.
/// </summary>
public sealed class RouteFaultTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    // Routes ping every second and give up after two unanswered pings: a frozen peer is dropped in ~3 s.
    private static ClusterSpec Fast(params string[] kinds) => new(kinds) { ExtraConfig = _ => "ping_interval: \"1s\"\nping_max: 2" };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task FrozenServerPastThePingIntervalComesBack(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Fast(kindA, kindB));
        var (a, b) = (cluster[0], cluster[1]);
        await using var onA = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url, MaxReconnectRetry = -1 });
        await using var before = await onB.SubscribeCoreAsync<string>("frozen.before");
        await UntilReceivedAsync(onA, "frozen.before", before);

        b.Pause();
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        try
        {
            // A declares the frozen peer stale and drops the route; interest made meanwhile waits for the re-sync.
            await TestCluster.WaitForAsync(async () => (await a.RoutedPeersAsync(cts.Token)).Count == 0, $"{a} drops the route to frozen {b}", cts.Token);
            await using var during = await onA.SubscribeCoreAsync<string>("frozen.during");
            await onA.PingAsync(cts.Token);
            b.Resume();
            await cluster.WaitForMeshAsync();

            await UntilReceivedAsync(onB, "frozen.during", during);
            await UntilReceivedAsync(onA, "frozen.before", before);
            await onA.PublishAsync("frozen.before", "after", cancellationToken: cts.Token);
            Assert.Equal("after", (await NextAsync(before, "frozen.before")).Data);
        }
        finally
        {
            b.Resume();
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task CutRouteRestoredResyncsInterest(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        await CutAndRestoreAsync(cluster, 0, 1);
    }

    [Fact]
    public async Task PartitionedServerOfThreeRejoins()
    {
        await using var cluster = await TestCluster.StartAsync("ours", "go", "ours");
        await CutAndRestoreAsync(cluster, 0, 2);
    }

    /// <summary>
    /// Cuts <paramref name="i"/> off from every other server; meanwhile one subscription comes on <paramref name="i"/>
    /// and one goes on <paramref name="j"/>. After the restore both servers hold exactly the interest of now.
    /// </summary>
    private static async Task CutAndRestoreAsync(TestCluster cluster, int i, int j)
    {
        var (a, b) = (cluster[i], cluster[j]);
        await using var onA = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var kept = await onA.SubscribeCoreAsync<string>("cut.kept");
        var gone = await onB.SubscribeCoreAsync<string>("cut.gone");
        await UntilReceivedAsync(onB, "cut.kept", kept);
        await UntilReceivedAsync(onA, "cut.gone", gone);

        cluster.Isolate(i);
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        await TestCluster.WaitForAsync(async () => (await a.RoutedPeersAsync(cts.Token)).Count == 0, $"{a} is partitioned", cts.Token);
        await TestCluster.WaitForAsync(async () => !(await b.RoutedPeersAsync(cts.Token)).Contains(a.ServerId), $"{b} loses {a}", cts.Token);
        await using var added = await onA.SubscribeCoreAsync<string>("cut.added");
        await gone.UnsubscribeAsync();
        await onA.PingAsync(cts.Token);
        await onB.PingAsync(cts.Token);

        cluster.Heal();
        await cluster.WaitForMeshAsync();
        await UntilReceivedAsync(onB, "cut.added", added);
        await UntilReceivedAsync(onB, "cut.kept", kept);
        // The withdrawn interest did not survive the partition on the other side.
        var held = await a.RouteSubjectsFromAsync(b, cts.Token);
        Assert.DoesNotContain("cut.gone", held);
        Assert.Contains("cut.added", await b.RouteSubjectsFromAsync(a, cts.Token));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task KilledServerRestartsUnderItsClients(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url, MaxReconnectRetry = -1 });
        await using var onA = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var sub = await onB.SubscribeCoreAsync<string>("killed.>");
        await UntilReceivedAsync(onA, "killed.probe", sub);

        await cluster.KillAsync(1);
        await cluster.RestartAsync(1);
        await cluster.WaitForMeshAsync();
        // NATS.Net resubscribes on reconnect (to B on its old port, or to A it learnt of): the interest is back.
        await UntilReceivedAsync(onA, "killed.probe", sub);
        await onA.PublishAsync("killed.after", "again");
        Assert.Equal("again", (await NextAsync(sub, "killed.probe")).Data);
        // The restarted process serves new clients with the cluster's interest.
        await using var fresh = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var onRestarted = await fresh.SubscribeCoreAsync<string>("killed.fresh");
        await UntilReceivedAsync(onA, "killed.fresh", onRestarted);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task ClientFailsOverToAServerFromConnectUrls(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var mover = new NatsConnection(new NatsOpts { Url = a.Url, MaxReconnectRetry = -1 });
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var sub = await mover.SubscribeCoreAsync<string>("failover.>");
        await UntilReceivedAsync(onB, "failover.probe", sub);
        Assert.Contains(mover.ServerInfo!.ClientConnectUrls ?? [], u => u.EndsWith($":{b.ClientPort}", StringComparison.Ordinal));

        await cluster.KillAsync(0);
        await UntilReceivedAsync(onB, "failover.probe", sub);
        Assert.Equal(b.ServerId, mover.ServerInfo!.Id);
        await onB.PublishAsync("failover.after", "moved");
        Assert.Equal("moved", (await NextAsync(sub, "failover.probe")).Data);
    }

    [Fact]
    public async Task ExplicitRouteSurvivesDialsResetByThePeer()
    {
        // A dials B; B dials no one. While B is down its proxy resets every dial right after connect, which used to
        // end our solicitor for good when the reset beat the route's set-up.
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec(["ours", "ours"]) { RoutesOf = (self, _) => self == 0 ? [1] : [] });
        var b = cluster[1];
        await cluster.KillAsync(1);
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        var refused = b.Proxy.Refused;
        await TestCluster.WaitForAsync(() => Task.FromResult(b.Proxy.Refused >= refused + 5), "five dials reset", cts.Token);
        await cluster.RestartAsync(1);
        await cluster.WaitForMeshAsync();
    }
}
