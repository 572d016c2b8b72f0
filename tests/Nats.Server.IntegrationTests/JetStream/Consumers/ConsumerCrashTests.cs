using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// kill -9 of the real executable right after a durable consumer's double acks were confirmed, several
/// times over one store directory: after each restart no acknowledged message comes back, and every
/// unacknowledged one is delivered again; in the end every message was acknowledged exactly once.
/// </summary>
public sealed class ConsumerCrashTests
{
    private const int Messages = 120;
    private const int Cycles = 3;
    private const int FetchPerCycle = 30;
    private const int AckPerCycle = 20;

    [Fact]
    public async Task KillAfterConfirmedAcksRedeliversNothingAcknowledgedAndLosesNothing()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-js-consumer-crash-").FullName;
        var acked = new HashSet<string>();
        var unacked = new HashSet<string>();
        try
        {
            for (var cycle = 0; cycle <= Cycles; cycle++)
            {
                await using var server = await KillableServer.StartAsync(go: false, storeDir);
                try
                {
                    var port = server.Port;
                    await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(20) });
                    var js = new NatsJSContext(nats);
                    if (cycle == 0)
                    {
                        await js.CreateStreamAsync(new StreamConfig("JOBS", ["jobs.>"]));
                        for (var i = 0; i < Messages; i++)
                        {
                            (await js.PublishAsync("jobs.x", $"job{i}")).EnsureSuccess();
                        }
                        await js.CreateOrUpdateConsumerAsync("JOBS", new ConsumerConfig("workers") { AckWait = TimeSpan.FromMinutes(5) });
                    }
                    var consumer = await js.GetConsumerAsync("JOBS", "workers");
                    // Acks cover job0..job(n-1) (stream sequences 1..n) in order, so the floor is their count.
                    Assert.Equal((ulong)acked.Count, consumer.Info.AckFloor.StreamSeq);
                    Assert.Equal(unacked.Count, consumer.Info.NumAckPending);
                    var batch = new List<INatsJSMsg<string>>();
                    var max = cycle == Cycles ? Messages : FetchPerCycle;
                    await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = max, Expires = TimeSpan.FromSeconds(3) }))
                    {
                        batch.Add(msg);
                    }
                    // Everything left unacknowledged before the kill comes first again.
                    Assert.Equal(unacked.Order(), batch.Take(unacked.Count).Select(m => m.Data!).Order());
                    foreach (var msg in batch)
                    {
                        Assert.DoesNotContain(msg.Data!, acked);
                    }
                    unacked.Clear();
                    var toAck = cycle == Cycles ? batch.Count : AckPerCycle;
                    foreach (var msg in batch.Take(toAck))
                    {
                        await msg.AckAsync(new AckOpts { DoubleAck = true });
                        acked.Add(msg.Data!);
                    }
                    foreach (var msg in batch.Skip(toAck))
                    {
                        unacked.Add(msg.Data!);
                    }
                }
                finally
                {
                    await server.KillAsync();
                }
            }
            Assert.Equal(Messages, acked.Count);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
