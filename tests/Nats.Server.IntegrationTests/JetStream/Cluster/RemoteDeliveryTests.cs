using System.Text.Json;
using Nats.Server.IntegrationTests.Clients;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// A consumer's deliveries to a client connected to another server of the cluster (Go's '@' in the ack reply on
/// the route): pull fetches (NATS.Net) of durables on an R3 and an R1 stream, an ordered consumer, a push durable
/// read by nats.go, each acknowledged from there with the ack floor advancing on the consumer's leader.
/// </summary>
public class RemoteDeliveryTests(ITestOutputHelper output)
{
    [Fact]
    public async Task PullFetchAndOrderedConsumerFromAServerThatIsNotTheConsumerLeader()
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var all = cluster.Servers.ToList();
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[0]));
            var js = new NatsJSContext(nc);

            // R3: the durable's leader is one server, the fetching client on another.
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
            for (var i = 1; i <= 30; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
            }
            var created = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            var remote = all.First(s => s.Name != created.Info.Cluster!.Leader);
            await using (var there = new NatsConnection(ReplicatedStreamTests.App(remote)))
            {
                var consumer = await new NatsJSContext(there).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
                Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), await FetchAndAckAsync(consumer, "orders.new", 10, cts.Token));
            }
            await WaitForAckFloorAsync(js, "ORDERS", "WORKER", 10, cts.Token);

            // R1: the stream and its durable on one server, the client on another.
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("EVENTS", ["events.>"]), cts.Token);
            for (var i = 1; i <= 10; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "events.x", $"e{i}", cts.Token);
            }
            // The holder is the one with two streams (EVENTS and its ORDERS replica).
            ClusterServer? holder = null;
            foreach (var server in all)
            {
                if ((await ReplicatedStreamTests.ReplicaStateAsync(server, cts.Token)).Streams == 2)
                {
                    holder = server;
                }
            }
            Assert.NotNull(holder);
            await js.CreateOrUpdateConsumerAsync("EVENTS", new ConsumerConfig("LOG") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            await using (var there = new NatsConnection(ReplicatedStreamTests.App(all.First(s => s != holder))))
            {
                var consumer = await new NatsJSContext(there).GetConsumerAsync("EVENTS", "LOG", cts.Token);
                Assert.Equal(Enumerable.Range(1, 10).Select(i => $"e{i}"), await FetchAndAckAsync(consumer, "events.x", 10, cts.Token));
            }
            await WaitForAckFloorAsync(js, "EVENTS", "LOG", 10, cts.Token);

            // An ordered consumer from a server that does not lead the R3 stream.
            var streamLeader = (await js.GetStreamAsync("ORDERS", cancellationToken: cts.Token)).Info.Cluster!.Leader;
            await using (var there = new NatsConnection(ReplicatedStreamTests.App(all.First(s => s.Name != streamLeader))))
            {
                var ordered = await new NatsJSContext(there).CreateOrderedConsumerAsync("ORDERS", cancellationToken: cts.Token);
                var got = new List<string>();
                await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: cts.Token))
                {
                    Assert.Equal("orders.new", msg.Subject);
                    Assert.Equal((ulong)(got.Count + 1), msg.Metadata!.Value.Sequence.Stream);
                    got.Add(msg.Data!);
                    if (got.Count == 30)
                    {
                        break;
                    }
                }
                Assert.Equal(Enumerable.Range(1, 30).Select(i => $"m{i}"), got);
            }
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    [Fact]
    public async Task PushDurableReadByNatsGoOnAServerThatIsNotTheConsumerLeader()
    {
        await NatsGoProgram.BuildAsync("jspush");
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var all = cluster.Servers.ToList();
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[0]));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
            for (var i = 1; i <= 25; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
            }
            var created = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("PUSHER")
            {
                DeliverSubject = "deliver.pusher",
                FilterSubject = "orders.new",
                AckPolicy = ConsumerConfigAckPolicy.Explicit,
            }, cts.Token);
            var remote = all.First(s => s.Name != created.Info.Cluster!.Leader);
            var url = $"nats://app:pass@127.0.0.1:{remote.ClientPort}";
            var result = await NatsGoProgram.RunAsync("jspush", TimeSpan.FromMinutes(3), url, "orders.new", "25", "ORDERS", "PUSHER");
            Assert.StartsWith("25 msgs in ", result, StringComparison.Ordinal);
            var info = await WaitForAckFloorAsync(js, "ORDERS", "PUSHER", 25, cts.Token);
            Assert.Equal(0, info.NumAckPending);
            Assert.Equal(25UL, info.Delivered.StreamSeq);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    /// <summary>Fetches <paramref name="count"/> messages, each shown under <paramref name="subject"/>, and double-acks each.</summary>
    internal static async Task<List<string>> FetchAndAckAsync(INatsJSConsumer consumer, string subject, int count, CancellationToken token)
    {
        var got = new List<string>();
        var rounds = 0;
        while (got.Count < count)
        {
            if (++rounds > 10)
            {
                await consumer.RefreshAsync(token);
                throw new InvalidOperationException($"fetched {got.Count}: {JsonSerializer.Serialize(consumer.Info)}");
            }
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = count - got.Count, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: token))
            {
                Assert.Equal(subject, msg.Subject);
                got.Add(msg.Data!);
                await msg.AckAsync(new AckOpts { DoubleAck = true }, token);
            }
        }
        return got;
    }

    internal static async Task<ConsumerInfo> WaitForAckFloorAsync(NatsJSContext js, string stream, string consumer, ulong floor, CancellationToken token)
    {
        ConsumerInfo? last = null;
        await TestCluster.WaitForAsync(async () =>
        {
            last = (await js.GetConsumerAsync(stream, consumer, token)).Info;
            return last.AckFloor.StreamSeq >= floor;
        }, $"{stream} > {consumer} ack floor at {floor} (last {JsonSerializer.Serialize(last?.AckFloor)})", token);
        return last!;
    }
}
