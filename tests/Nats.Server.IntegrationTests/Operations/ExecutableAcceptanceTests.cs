using System.Text.Json;
using Nats.Server.IntegrationTests.Core;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// Our server as the executable users run (<see cref="KillableServer.OursStartInfo"/>: in CI the Native AOT
/// build named by NATS_SERVER_EXE, otherwise this build under dotnet), next to Go 2.9.10 started the same
/// way: the same client scenario must give the same results on both. Core pub/sub and request/reply, a
/// stream with a durable consumer and a KV bucket through NATS.Net, /varz, and a bad protocol line.
/// </summary>
public sealed class ExecutableAcceptanceTests
{
    [Fact]
    public async Task ClientsMonitoringAndBadInputBehaveLikeGo()
    {
        var goDir = Directory.CreateTempSubdirectory("nats-accept-go-").FullName;
        var oursDir = Directory.CreateTempSubdirectory("nats-accept-ours-").FullName;
        try
        {
            var goStart = KillableServer.StartAsync(go: true, goDir, "-m", "-1");
            var oursStart = KillableServer.StartAsync(go: false, oursDir, "-m", "-1");
            await using var go = await goStart;
            await using var ours = await oursStart;
            var expected = await ScenarioAsync(go);
            var actual = await ScenarioAsync(ours);
            Assert.Equal(expected, actual);
        }
        finally
        {
            Directory.Delete(goDir, recursive: true);
            Directory.Delete(oursDir, recursive: true);
        }
    }

    private static async Task<List<string>> ScenarioAsync(KillableServer server)
    {
        var seen = new List<string>();
        await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
        await nats.ConnectAsync();
        Assert.Equal(NatsConnectionState.Open, nats.ConnectionState);

        // Core: a subscription sees a publish; a service answers a request.
        await using (var sub = await nats.SubscribeCoreAsync<string>("greet.*"))
        {
            await nats.PublishAsync("greet.joe", "hello");
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            var msg = await sub.Msgs.ReadAsync(timeout.Token);
            seen.Add($"sub {msg.Subject} {msg.Data}");
        }
        await using (var service = await nats.SubscribeCoreAsync<int>("math.double"))
        {
            var responder = Task.Run(async () =>
            {
                await foreach (var request in service.Msgs.ReadAllAsync())
                {
                    await request.ReplyAsync(request.Data * 2);
                    break;
                }
            });
            var reply = await nats.RequestAsync<int, int>("math.double", 21);
            seen.Add($"reply {reply.Data}");
            await responder;
        }

        // JetStream: stream publish, durable consumer fetch with acks, KV put and get.
        var js = new NatsJSContext(nats);
        await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
        for (var i = 1; i <= 3; i++)
        {
            var ack = await js.PublishAsync($"orders.{i}", $"order {i}");
            seen.Add($"puback {ack.Stream} {ack.Seq} {ack.Duplicate}");
        }
        var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("worker"));
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(10) }))
        {
            seen.Add($"fetch {msg.Subject} {msg.Data} {msg.Metadata!.Value.Sequence.Stream}");
            await msg.AckAsync(new AckOpts { DoubleAck = true });
        }
        await consumer.RefreshAsync();
        seen.Add($"consumer floor {consumer.Info.AckFloor.StreamSeq} pending {consumer.Info.NumPending}");
        var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig("settings"));
        var revision = await kv.PutAsync("color", "blue");
        var entry = await kv.GetEntryAsync<string>("color");
        seen.Add($"kv {revision} {entry.Key} {entry.Value} {entry.Revision}");

        // Monitoring: /varz answers with the limits and version Go reports.
        using (var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) })
        {
            using var varz = JsonDocument.Parse(await http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/varz"));
            foreach (var field in (string[])["version", "proto", "max_payload", "max_control_line", "max_pending", "ping_max"])
            {
                seen.Add($"varz {field} {varz.RootElement.GetProperty(field).GetRawText()}");
            }
            seen.Add($"varz jetstream {varz.RootElement.TryGetProperty("jetstream", out _)}");
        }

        // Bad input: Go's exact -ERR, then the connection is closed.
        await using (var raw = await RawClient.ConnectAsync(server.Port))
        {
            await raw.ConnectAndReadInfoAsync();
            await raw.SendAsync("FOO bar\r\n");
            seen.Add($"bad input {(await raw.ReadToEndAsync()).Trim()}");
        }
        return seen;
    }
}
