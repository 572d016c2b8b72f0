using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Ephemeral consumers of an R3 stream on three of our servers, assigned through the meta group as in Go: R1 on the
/// stream's leader, created and used from another server; an ordered consumer recreates itself after the stream's
/// leader (holding its ephemeral) is killed and reads on without a gap.
/// </summary>
public class EphemeralConsumerTests(ITestOutputHelper output)
{
    [Fact]
    public async Task EphemeralAssignedOnTheStreamLeaderAndOrderedConsumerRecreatedAfterItsKill()
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var all = cluster.Servers.ToList();
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[0]));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
            for (var i = 1; i <= 20; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
            }
            var leaderName = (await js.GetStreamAsync("ORDERS", cancellationToken: cts.Token)).Info.Cluster!.Leader;
            var leader = all.Single(s => s.Name == leaderName);
            var client = all.First(s => s != leader);
            await using var there = new NatsConnection(ReplicatedStreamTests.App(client));
            var tjs = new NatsJSContext(there);

            // An ephemeral created from a server that does not lead the stream: R1 on the leader, known everywhere.
            var ephemeral = await tjs.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            var name = ephemeral.Info.Name;
            Assert.Equal(leaderName, ephemeral.Info.Cluster?.Leader);
            Assert.Equal(TimeSpan.FromSeconds(5), ephemeral.Info.Config.InactiveThreshold);
            foreach (var server in all)
            {
                await using var other = new NatsConnection(ReplicatedStreamTests.App(server));
                Assert.Equal(name, (await new NatsJSContext(other).GetConsumerAsync("ORDERS", name, cts.Token)).Info.Name);
            }
            Assert.Equal(Enumerable.Range(1, 5).Select(i => $"m{i}"), await RemoteDeliveryTests.FetchAndAckAsync(ephemeral, "orders.new", 5, cts.Token));
            await RemoteDeliveryTests.WaitForAckFloorAsync(tjs, "ORDERS", name, 5, cts.Token);

            // An ordered consumer on the client's server; its ephemeral lives on the leader, which is killed mid-read.
            var ordered = await tjs.CreateOrderedConsumerAsync("ORDERS", new NatsJSOrderedConsumerOpts(), cts.Token);
            var seen = new List<ulong>();
            var twenty = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var reader = Task.Run(async () =>
            {
                await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: cts.Token))
                {
                    seen.Add(msg.Metadata!.Value.Sequence.Stream);
                    if (seen.Count == 20)
                    {
                        twenty.TrySetResult();
                    }
                    if (seen.Count == 40)
                    {
                        return;
                    }
                }
            }, cts.Token);
            await twenty.Task.WaitAsync(cts.Token);
            await leader.KillAsync();
            for (var i = 21; i <= 40; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(tjs, "orders.new", $"m{i}", cts.Token);
            }
            await reader.WaitAsync(cts.Token);
            Assert.Equal(Enumerable.Range(1, 40).Select(i => (ulong)i), seen);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }
}
