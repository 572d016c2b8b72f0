using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// R3 streams on three of our servers as real processes: placed on all three with a RAFT group, created and
/// published through any server, every replica holding the same messages, the cluster block in the stream info,
/// STREAM.LEADER.STEPDOWN, and a delete that removes every replica.
/// </summary>
public class ReplicatedStreamTests
{
    internal static ClusterSpec Spec(params string[] kinds) => new(kinds.Length == 0 ? ["ours", "ours", "ours"] : kinds)
    {
        ExtraConfig = s => $$"""
            jetstream { store_dir: "{{s.StoreDir}}" }
            accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
            system_account: SYS
            """,
    };

    internal static NatsOpts App(ClusterServer server) => new()
    {
        Url = server.Url,
        AuthOpts = new NatsAuthOpts { Username = "app", Password = "pass" },
        RequestTimeout = TimeSpan.FromSeconds(10),
    };

    [Fact]
    public async Task R3StreamReplicatedToEveryServerWithClusterInfoStepDownAndDelete()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
        var all = cluster.Servers.ToList();
        await using var nc = new NatsConnection(App(all[1]));
        var js = new NatsJSContext(nc);

        var created = await CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
        Assert.Equal(3, created.Info.Config.NumReplicas);
        Assert.NotNull(created.Info.Cluster);
        Assert.Equal("T", created.Info.Cluster!.Name);
        var leader = created.Info.Cluster.Leader;
        Assert.Contains(leader, all.Select(s => s.Name));
        Assert.Equal(all.Select(s => s.Name).Where(n => n != leader).Order(), created.Info.Cluster.Replicas!.Select(r => r.Name).Order());

        // Published through every server; every ack in order.
        var expected = 0UL;
        foreach (var server in all)
        {
            await using var pub = new NatsConnection(App(server));
            var ctx = new NatsJSContext(pub);
            for (var i = 0; i < 20; i++)
            {
                var ack = await ctx.PublishAsync($"orders.{server.Name}", $"{server.Name}{i}", cancellationToken: cts.Token);
                ack.EnsureSuccess();
                Assert.Equal(++expected, ack.Seq);
            }
        }
        await ReplicasAgreeAsync(cluster, "ORDERS", 60, cts.Token);

        // Stream info is the leader's, with the other replicas current.
        var info = await js.GetStreamAsync("ORDERS", cancellationToken: cts.Token);
        Assert.Equal(60L, info.Info.State.Messages);
        Assert.Equal(leader, info.Info.Cluster!.Leader);

        // Step down: another replica leads and publishes go on.
        var reply = await nc.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", "", cancellationToken: cts.Token);
        Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_leader_stepdown_response","success":true}""", reply.Data);
        var next = await PublishUntilAckedAsync(js, "orders.x", "after", cts.Token);
        Assert.Equal(61UL, next.Seq);
        var after = await js.GetStreamAsync("ORDERS", cancellationToken: cts.Token);
        Assert.NotEqual(leader, after.Info.Cluster!.Leader);
        await ReplicasAgreeAsync(cluster, "ORDERS", 61, cts.Token);

        // Deleted everywhere.
        Assert.True(await js.DeleteStreamAsync("ORDERS", cts.Token));
        await TestCluster.WaitForAsync(async () =>
        {
            foreach (var server in all)
            {
                if ((await ReplicaStateAsync(server, cts.Token)).Streams != 0)
                {
                    return false;
                }
            }
            return true;
        }, "every replica deleted", cts.Token);
        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("ORDERS", cancellationToken: cts.Token));
        Assert.Equal(10059, missing.Error.ErrCode);
    }

    /// <summary>A create, retried while the meta group has no leader yet (nobody answers then).</summary>
    internal static async Task<INatsJSStream> CreateWhenMetaReadyAsync(NatsJSContext js, StreamConfig config, CancellationToken token)
    {
        while (true)
        {
            try
            {
                return await js.CreateStreamAsync(config, token);
            }
            catch (NatsNoRespondersException)
            {
            }
            catch (NatsJSApiNoResponseException)
            {
            }
            catch (NatsJSApiException e) when (e.Error.ErrCode == 10005)
            {
                // Go's meta leader may not know enough peers yet right after it was elected.
            }
            catch (NatsException e) when (e.InnerException is TimeoutException || e is NatsJSTimeoutException)
            {
            }
            await Task.Delay(200, token);
        }
    }

    /// <summary>A publish retried until acknowledged (while a replicated stream has no leader, nobody answers).</summary>
    internal static async Task<PubAckResponse> PublishUntilAckedAsync(NatsJSContext js, string subject, string data, CancellationToken token)
    {
        while (true)
        {
            try
            {
                var ack = await js.PublishAsync(subject, data, opts: new NatsJSPubOpts { MsgId = data }, cancellationToken: token);
                ack.EnsureSuccess();
                return ack;
            }
            catch (NatsJSPublishNoResponseException)
            {
            }
            catch (NatsNoRespondersException)
            {
            }
            catch (NatsException e) when (e.InnerException is TimeoutException || e is NatsJSTimeoutException)
            {
            }
            catch (TimeoutException)
            {
            }
        }
    }

    /// <summary>One server's own replicas, from its /jsz totals (the tests hold one stream): streams, messages, bytes.</summary>
    internal static async Task<(int Streams, long Messages, long Bytes)> ReplicaStateAsync(ClusterServer server, CancellationToken token)
    {
        using var jsz = await server.GetJsonAsync("/jsz", token);
        var root = jsz.RootElement;
        return (root.GetProperty("streams").GetInt32(), root.GetProperty("messages").GetInt64(), root.GetProperty("bytes").GetInt64());
    }

    /// <summary>
    /// Waits until every running server's replica holds the same messages (count and bytes), <paramref name="messages"/>
    /// of them when given; returns the count.
    /// </summary>
    internal static async Task<long> ReplicasAgreeAsync(TestCluster cluster, string stream, long? messages, CancellationToken token)
    {
        string last = "";
        long agreed = 0;
        try
        {
            await TestCluster.WaitForAsync(async () =>
            {
                var states = new List<(int Streams, long Messages, long Bytes)>();
                foreach (var server in cluster.Servers.Where(s => s.IsRunning))
                {
                    states.Add(await ReplicaStateAsync(server, token));
                }
                last = string.Join(", ", states);
                agreed = states[0].Messages;
                return states.Distinct().Count() == 1 && states[0].Streams == 1 && (messages is null || agreed == messages);
            }, $"every replica of {stream} holding {messages?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "the same"} messages alike", token);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} (last: {last})\n{cluster.Logs()}", e);
        }
        return agreed;
    }
}
