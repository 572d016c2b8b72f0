using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// A durable consumer of an R3 stream on three of our servers as real processes: created through any server with a
/// group on all three (the cluster block in its info), its acknowledged state the same on every replica, a leader
/// stepdown after which delivery continues past what was acknowledged, and a delete that removes every replica.
/// </summary>
public class ReplicatedConsumerTests(ITestOutputHelper output)
{
    [Fact]
    public async Task DurableConsumerReplicatedWithClusterInfoStepDownAndDelete()
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
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
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[1]));
        var js = new NatsJSContext(nc);
        await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
        for (var i = 1; i <= 30; i++)
        {
            await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
        }

        var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
        Assert.NotNull(consumer.Info.Cluster);
        var leader = consumer.Info.Cluster!.Leader;
        Assert.Contains(leader, all.Select(s => s.Name));
        Assert.Equal(all.Select(s => s.Name).Where(n => n != leader).Order(), consumer.Info.Cluster.Replicas!.Select(r => r.Name).Order());
        // Created again with the same config: the same consumer.
        var again = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
        Assert.Equal(consumer.Info.Created, again.Info.Created);

        // The consuming client sits on the consumer's leader: a delivery to a client on another server is not routed yet.
        await using (var local = new NatsConnection(ReplicatedStreamTests.App(all.Single(s => s.Name == leader))))
        {
            var there = await new NatsJSContext(local).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
            Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), await FetchAndAckAsync(there, 10, cts.Token));
        }
        var acked = await WaitForAckFloorAsync(js, 10, cts.Token);
        Assert.Equal(0, acked.NumAckPending);

        // Every replica holds the acknowledged state: a stepdown hands delivery to one that resumes after it.
        var reply = await nc.RequestAsync<string, string>("$JS.API.CONSUMER.LEADER.STEPDOWN.ORDERS.WORKER", "", cancellationToken: cts.Token);
        Assert.Equal("""{"type":"io.nats.jetstream.api.v1.consumer_leader_stepdown_response","success":true}""", reply.Data);
        await TestCluster.WaitForAsync(async () =>
        {
            try
            {
                var info = await js.GetConsumerAsync("ORDERS", "WORKER", cts.Token);
                return info.Info.Cluster?.Leader is { Length: > 0 } now && now != leader;
            }
            catch (NatsException)
            {
                return false;
            }
        }, "a new consumer leader", cts.Token);
        consumer = await js.GetConsumerAsync("ORDERS", "WORKER", cts.Token);
        Assert.Equal(10UL, consumer.Info.AckFloor.StreamSeq);
        await using (var local = new NatsConnection(ReplicatedStreamTests.App(all.Single(s => s.Name == consumer.Info.Cluster!.Leader))))
        {
            var there = await new NatsJSContext(local).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
            Assert.Equal(Enumerable.Range(11, 10).Select(i => $"m{i}"), await FetchAndAckAsync(there, 10, cts.Token));
        }
        await WaitForAckFloorAsync(js, 20, cts.Token);

        // Listed by the stream's leader, whichever replica leads the consumer.
        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync("ORDERS", cts.Token))
        {
            names.Add(name);
        }
        Assert.Equal(["WORKER"], names);

        Assert.True(await js.DeleteConsumerAsync("ORDERS", "WORKER", cts.Token));
        // Answered "not found" once every server applied the removal (until then the old leader's may be silent).
        await TestCluster.WaitForAsync(async () =>
        {
            try
            {
                await js.GetConsumerAsync("ORDERS", "WORKER", cts.Token);
                return false;
            }
            catch (NatsJSApiException e) when (e.Error.ErrCode == 10014)
            {
                return true;
            }
            catch (NatsJSApiNoResponseException)
            {
                return false;
            }
        }, "consumer not found", cts.Token);
        // Gone from every replica's consumer count.
        await TestCluster.WaitForAsync(async () =>
        {
            foreach (var server in all)
            {
                using var jsz = await server.GetJsonAsync("/jsz", cts.Token);
                if (jsz.RootElement.GetProperty("consumers").GetInt32() != 0)
                {
                    return false;
                }
            }
            return true;
        }, "the consumer deleted on every replica", cts.Token);
    }

    /// <summary>
    /// kill -9 of the consumer's leader after 20 of 40 messages were double-acked: another replica leads, its ack floor
    /// is not below what was acknowledged, and everything after it is delivered (at least once) from there.
    /// </summary>
    [Fact]
    public async Task ConsumerLeaderKilledNewLeaderResumesAtTheAckFloor()
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var all = cluster.Servers.ToList();
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[0]));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, cts.Token);
            for (var i = 1; i <= 40; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", cts.Token);
            }
            var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, cts.Token);
            var leader = all.Single(s => s.Name == consumer.Info.Cluster!.Leader);
            await using (var local = new NatsConnection(ReplicatedStreamTests.App(leader)))
            {
                var there = await new NatsJSContext(local).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
                Assert.Equal(Enumerable.Range(1, 20).Select(i => $"m{i}"), await FetchAndAckAsync(there, 20, cts.Token));
            }
            await leader.KillAsync();

            var survivor = all.First(s => s != leader);
            await using var other = new NatsConnection(ReplicatedStreamTests.App(survivor));
            var ojs = new NatsJSContext(other);
            ConsumerInfo? info = null;
            await TestCluster.WaitForAsync(async () =>
            {
                try
                {
                    info = (await ojs.GetConsumerAsync("ORDERS", "WORKER", cts.Token)).Info;
                    return info.Cluster?.Leader is { Length: > 0 } now && now != leader.Name;
                }
                catch (NatsException)
                {
                    return false;
                }
            }, "a new consumer leader after the kill", cts.Token);
            Assert.True(info!.AckFloor.StreamSeq >= 20, $"ack floor {info.AckFloor.StreamSeq} went back below 20");
            var newLeader = all.Single(s => s.Name == info.Cluster!.Leader);
            await using var there2 = new NatsConnection(ReplicatedStreamTests.App(newLeader));
            var resumed = await new NatsJSContext(there2).GetConsumerAsync("ORDERS", "WORKER", cts.Token);
            var rest = await FetchAndAckAsync(resumed, 20, cts.Token);
            Assert.Equal(Enumerable.Range(21, 20).Select(i => $"m{i}"), rest);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    /// <summary>Fetches <paramref name="count"/> messages and double-acks each (confirmed once the ack is committed).</summary>
    internal static async Task<List<string>> FetchAndAckAsync(INatsJSConsumer consumer, int count, CancellationToken token)
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
                got.Add(msg.Data!);
                await msg.AckAsync(new AckOpts { DoubleAck = true }, token);
            }
        }
        return got;
    }

    private static async Task<ConsumerInfo> WaitForAckFloorAsync(NatsJSContext js, ulong floor, CancellationToken token)
    {
        ConsumerInfo? last = null;
        await TestCluster.WaitForAsync(async () =>
        {
            last = (await js.GetConsumerAsync("ORDERS", "WORKER", token)).Info;
            return last.AckFloor.StreamSeq >= floor;
        }, $"the ack floor at {floor} (last {JsonSerializer.Serialize(last?.AckFloor)})", token);
        return last!;
    }
}
