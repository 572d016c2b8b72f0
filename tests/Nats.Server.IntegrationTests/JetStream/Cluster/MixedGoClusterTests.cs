using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Two Go 2.9.10 JetStream servers and one of ours without JetStream, routed into one cluster: a NATS.Net client
/// of ours creates streams, publishes, fetches and acknowledges, and uses a KV bucket, all hosted by the Go servers
/// ($JS.API requests reach Go's meta and stream leaders, deliveries come back with Go's '@' ack reply).
/// </summary>
public class MixedGoClusterTests(ITestOutputHelper output)
{
    /// <param name="jetStream">The kind of server that runs JetStream; the other kind only routes.</param>
    private static ClusterSpec Spec(string jetStream, params string[] kinds) => new(kinds)
    {
        ExtraConfig = s => (s.Kind == jetStream ? $$"""jetstream { store_dir: "{{s.StoreDir}}" }""" + "\n" : "") + """
            accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
            system_account: SYS
            """,
    };

    [Fact]
    public async Task GoJetStreamServesClientsOfOurNonJetStreamServer()
    {
        await using var cluster = await TestCluster.StartAsync(Spec(jetStream: "go", "go", "go", "ours"));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var ours = cluster.Servers.Single(s => s.Kind == "ours");
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(ours));
            var js = new NatsJSContext(nc);

            foreach (var (name, replicas) in new[] { ("ONE", 1), ("TWO", 2) })
            {
                var stream = await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig(name, [$"{name.ToLowerInvariant()}.>"]) { NumReplicas = replicas }, cts.Token);
                Assert.Equal(replicas, stream.Info.Config.NumReplicas);
                Assert.Contains(stream.Info.Cluster!.Leader, cluster.Servers.Where(s => s.Kind == "go").Select(s => s.Name));
                var subject = $"{name.ToLowerInvariant()}.new";
                for (var i = 1; i <= 20; i++)
                {
                    var ack = await ReplicatedStreamTests.PublishUntilAckedAsync(js, subject, $"{name}{i}", cts.Token);
                    Assert.Equal((ulong)i, ack.Seq);
                }
                await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
                var consumer = await js.GetConsumerAsync(name, "WORKER", cts.Token);
                Assert.Equal(Enumerable.Range(1, 10).Select(i => $"{name}{i}"), await RemoteDeliveryTests.FetchAndAckAsync(consumer, subject, 10, cts.Token));
                var info = await RemoteDeliveryTests.WaitForAckFloorAsync(js, name, "WORKER", 10, cts.Token);
                Assert.Equal(10UL, info.NumPending);
            }

            var kv = new NatsKVContext(js);
            var store = await kv.CreateStoreAsync(new NatsKVConfig("settings"), cts.Token);
            var revision = await store.PutAsync("color", "blue", cancellationToken: cts.Token);
            Assert.Equal(1UL, revision);
            var entry = await store.GetEntryAsync<string>("color", cancellationToken: cts.Token);
            Assert.Equal("blue", entry.Value);
            // A watch is an ordered push consumer on Go delivering to our client.
            await foreach (var seen in store.WatchAsync<string>("color", cancellationToken: cts.Token))
            {
                Assert.Equal("color", seen.Key);
                Assert.Equal("blue", seen.Value);
                break;
            }
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    /// <summary>The other way round: two of our JetStream servers and a Go 2.9.10 server that only routes; a NATS.Net client
    /// of the Go server fetches and acknowledges from a durable of ours (our deliveries reach Go with the '@' ack reply).</summary>
    [Fact]
    public async Task OurJetStreamDeliversToClientsOfAGoServer()
    {
        await using var cluster = await TestCluster.StartAsync(Spec(jetStream: "ours", "ours", "ours", "go"));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var ours = cluster.Servers.First(s => s.Kind == "ours");
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(ours));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 2 }, cts.Token);
            for (var i = 1; i <= 20; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
            }
            await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            var go = cluster.Servers.Single(s => s.Kind == "go");
            await using var there = new NatsConnection(ReplicatedStreamTests.App(go));
            var consumer = await new NatsJSContext(there).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
            Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), await RemoteDeliveryTests.FetchAndAckAsync(consumer, "orders.new", 10, cts.Token));
            await RemoteDeliveryTests.WaitForAckFloorAsync(js, "ORDERS", "WORKER", 10, cts.Token);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }
}
