using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Our JetStream consumer delivering to a client of a Go 2.9.10 server in a mixed cluster: the client fetches and
/// acknowledges from there (Go splits our '@' ack reply as it does its own).
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

    /// <summary>Two of our JetStream servers and a Go 2.9.10 server that only routes; a NATS.Net client of the Go server
    /// fetches and acknowledges from a durable of ours.</summary>
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
