using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// The JetStream meta group on three of our servers as real processes (routes through the fixture's proxies):
/// a leader elected and shown alike by every server's /jsz, kill -9 of the leader, a new one elected, the
/// killed one restarted and rejoining; $JS.API.META.LEADER.STEPDOWN from the system account.
/// </summary>
public class MetaGroupTests
{
    private static ClusterSpec Spec() => new(["ours", "ours", "ours"])
    {
        ExtraConfig = s => $$"""
            jetstream { store_dir: "{{s.StoreDir}}" }
            accounts { SYS { users: [{ user: sys, password: pass }] } }
            system_account: SYS
            """,
    };

    [Fact]
    public async Task LeaderElectedKilledReplacedAndRejoined()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        var all = cluster.Servers.ToList();

        var first = await AgreedLeaderAsync(cluster, all, cts.Token);
        var leader = all.Single(s => s.Name == first);
        using (var jsz = await leader.GetJsonAsync("/jsz", cts.Token))
        {
            var meta = jsz.RootElement.GetProperty("meta_cluster");
            Assert.Equal("T", meta.GetProperty("name").GetString());
            Assert.Equal(3, meta.GetProperty("cluster_size").GetInt32());
            var replicas = meta.GetProperty("replicas").EnumerateArray().Select(r => r.GetProperty("name").GetString()!).Order().ToList();
            Assert.Equal(all.Where(s => s != leader).Select(s => s.Name).Order().ToList(), replicas);
        }

        await leader.KillAsync();
        var rest = all.Where(s => s != leader).ToList();
        var second = await AgreedLeaderAsync(cluster, rest, cts.Token, except: first);
        Assert.NotEqual(first, second);

        await cluster.RestartAsync(leader.Index);
        var third = await AgreedLeaderAsync(cluster, all, cts.Token);
        Assert.Equal(second, third);
        Assert.Contains(leader.Log.Text.Split('\n'), l => l.Contains("JetStream cluster recovering state", StringComparison.Ordinal));
    }

    [Fact]
    public async Task MetaLeaderStepDownHandsLeadershipToAnother()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        var all = cluster.Servers.ToList();
        var first = await AgreedLeaderAsync(cluster, all, cts.Token);

        // Ask through a follower: the request crosses the routes to the leader, the only one that answers.
        var follower = all.First(s => s.Name != first);
        await using var sys = new NatsConnection(new NatsOpts { Url = follower.Url, AuthOpts = new NatsAuthOpts { Username = "sys", Password = "pass" } });
        var reply = await sys.RequestAsync<string, string>("$JS.API.META.LEADER.STEPDOWN", "", cancellationToken: cts.Token);
        Assert.Equal("""{"type":"io.nats.jetstream.api.v1.meta_leader_stepdown_response","success":true}""", reply.Data);

        var second = await AgreedLeaderAsync(cluster, all, cts.Token, except: first);
        Assert.NotEqual(first, second);
    }

    [Fact]
    public async Task StreamCreatedOnAnyServerIsPlacedOnceAndServedEverywhere()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        var all = cluster.Servers.ToList();
        var leader = await AgreedLeaderAsync(cluster, all, cts.Token);
        var follower = all.First(s => s.Name != leader);

        // Created through a follower: the meta leader places it, the chosen server creates it and answers.
        await using var onFollower = new NatsConnection(new NatsOpts { Url = follower.Url });
        var js = new NatsJSContext(onFollower);
        var created = await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]), cts.Token);
        Assert.Equal("ORDERS", created.Info.Config.Name);

        // Published and read through every server.
        for (var i = 0; i < all.Count; i++)
        {
            await using var nc = new NatsConnection(new NatsOpts { Url = all[i].Url });
            var ctx = new NatsJSContext(nc);
            var ack = await ctx.PublishAsync($"orders.{i}", $"m{i}", cancellationToken: cts.Token);
            ack.EnsureSuccess();
            Assert.Equal((ulong)(i + 1), ack.Seq);
        }
        foreach (var server in all)
        {
            await using var nc = new NatsConnection(new NatsOpts { Url = server.Url });
            var stream = await new NatsJSContext(nc).GetStreamAsync("ORDERS", cancellationToken: cts.Token);
            Assert.Equal(3L, stream.Info.State.Messages);
        }

        var held = 0;
        foreach (var server in all)
        {
            using var jsz = await server.GetJsonAsync("/jsz", cts.Token);
            held += jsz.RootElement.GetProperty("streams").GetInt32();
        }
        Assert.Equal(1, held);

        // An unknown stream is answered once, by the meta leader; more replicas than servers are refused.
        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("NOPE", cancellationToken: cts.Token));
        Assert.Equal(10059, missing.Error.ErrCode);
        var r5 = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateStreamAsync(new StreamConfig("R5", ["r5"]) { NumReplicas = 5 }, cts.Token));
        Assert.Equal(10005, r5.Error.ErrCode);
    }

    /// <summary>Waits until every server in <paramref name="servers"/> names the same meta leader, one of them.</summary>
    private static async Task<string> AgreedLeaderAsync(TestCluster cluster, List<ClusterServer> servers, CancellationToken token, string? except = null)
    {
        string? agreed = null;
        try
        {
            await TestCluster.WaitForAsync(async () =>
            {
                var leaders = new List<string?>();
                foreach (var server in servers)
                {
                    using var jsz = await server.GetJsonAsync("/jsz", token);
                    leaders.Add(jsz.RootElement.TryGetProperty("meta_cluster", out var meta) && meta.TryGetProperty("leader", out var l) ? l.GetString() : null);
                }
                agreed = leaders[0];
                return agreed is not null && agreed != except && leaders.All(l => l == agreed) && servers.Any(s => s.Name == agreed);
            }, "every server naming the same meta leader", token);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message}\n{cluster.Logs()}", e);
        }
        return agreed!;
    }
}
