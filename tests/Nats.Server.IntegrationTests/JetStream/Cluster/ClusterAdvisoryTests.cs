using System.Text.Json;
using System.Threading.Channels;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Go's clustering advisories, received with NATS.Net in the stream's account from three of our servers and from
/// three Go 2.9.10 servers: STREAM.LEADER_ELECTED at create and after a step-down, CONSUMER.LEADER_ELECTED for a
/// durable of the R3 stream, and STREAM.QUORUM_LOST once the leader's two followers are killed; the same fields.
/// </summary>
public class ClusterAdvisoryTests(ITestOutputHelper output)
{
    private static readonly string[] ElectedKeys = ["id", "leader", "replicas", "stream", "timestamp", "type"];
    private static readonly string[] ReplicaKeys = ["active", "current", "name", "peer"];

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task LeaderElectedAndQuorumLostAdvisoriesInGoJson(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        try
        {
            await RunAsync(cluster);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    private static async Task RunAsync(TestCluster cluster)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
        var all = cluster.Servers.ToList();
        var names = all.Select(s => s.Name).ToList();
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[0]));
        var advisories = await SubscribeAsync(nc, cts.Token);
        var js = new NatsJSContext(nc);

        await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ADV", ["adv.>"]) { NumReplicas = 3 }, cts.Token);
        using (var elected = await NextAsync(advisories, "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.ADV", cts.Token))
        {
            var root = elected.RootElement;
            Assert.Equal(ElectedKeys, root.EnumerateObject().Select(p => p.Name).Order());
            Assert.Equal("io.nats.jetstream.advisory.v1.stream_leader_elected", root.GetProperty("type").GetString());
            Assert.Equal("ADV", root.GetProperty("stream").GetString());
            Assert.Contains(root.GetProperty("leader").GetString(), names);
            foreach (var replica in root.GetProperty("replicas").EnumerateArray())
            {
                Assert.Equal(ReplicaKeys, replica.EnumerateObject().Select(p => p.Name).Where(n => n != "lag").Order());
                Assert.Contains(replica.GetProperty("name").GetString(), names);
            }
        }

        await js.CreateOrUpdateConsumerAsync("ADV", new ConsumerConfig("D") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
        using (var elected = await NextAsync(advisories, "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.ADV.D", cts.Token))
        {
            var root = elected.RootElement;
            Assert.Equal(ElectedKeys.Append("consumer").Order(), root.EnumerateObject().Select(p => p.Name).Order());
            Assert.Equal("io.nats.jetstream.advisory.v1.consumer_leader_elected", root.GetProperty("type").GetString());
            Assert.Equal(("ADV", "D"), (root.GetProperty("stream").GetString(), root.GetProperty("consumer").GetString()));
            Assert.Contains(root.GetProperty("leader").GetString(), names);
        }

        var before = (await js.GetStreamAsync("ADV", cancellationToken: cts.Token)).Info.Cluster!.Leader;
        await ReplicatedStreamAdminTests.RequestAsync(nc, "$JS.API.STREAM.LEADER.STEPDOWN.ADV", "", cts.Token);
        string leader;
        while (true)
        {
            using var elected = await NextAsync(advisories, "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.ADV", cts.Token);
            leader = elected.RootElement.GetProperty("leader").GetString()!;
            if (leader != before)
            {
                break;
            }
        }

        // The leader's followers go: after Go's lost-quorum interval it steps down and says so.
        await using var there = new NatsConnection(ReplicatedStreamTests.App(all.Single(s => s.Name == leader)));
        var lost = await SubscribeAsync(there, cts.Token);
        foreach (var follower in all.Where(s => s.Name != leader))
        {
            await follower.KillAsync();
        }
        using var quorum = await NextAsync(lost, "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.ADV", cts.Token);
        Assert.Equal(new[] { "id", "replicas", "stream", "timestamp", "type" }, quorum.RootElement.EnumerateObject().Select(p => p.Name).Order());
        Assert.Equal("io.nats.jetstream.advisory.v1.stream_quorum_lost", quorum.RootElement.GetProperty("type").GetString());
    }

    private static async Task<Channel<(string Subject, string Data)>> SubscribeAsync(NatsConnection nc, CancellationToken token)
    {
        var channel = Channel.CreateUnbounded<(string, string)>();
        var subscription = await nc.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.>", cancellationToken: token);
        _ = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync(token))
            {
                channel.Writer.TryWrite((message.Subject, message.Data ?? ""));
            }
        }, token);
        await nc.PingAsync(token);
        return channel;
    }

    private static async Task<JsonDocument> NextAsync(Channel<(string Subject, string Data)> advisories, string subject, CancellationToken token)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(TimeSpan.FromSeconds(60));
        while (true)
        {
            var (got, data) = await advisories.Reader.ReadAsync(timeout.Token);
            if (got == subject)
            {
                return JsonDocument.Parse(data);
            }
        }
    }
}
