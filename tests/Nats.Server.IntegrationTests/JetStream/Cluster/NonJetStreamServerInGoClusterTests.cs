using System.Text.Json;
using Nats.Server.IntegrationTests.Clients;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// A server without JetStream in a cluster of three Go 2.9.10 JetStream servers, ours and (as the reference) a Go
/// server in the same place: its clients use the cluster's JetStream through it (Go's <c>$JS.API.&gt;</c> import from
/// the system account): NATS.Net and nats.go create streams, publish with acks, fetch from pull durables, read
/// ordered and push consumers, use KV and account info, and the request the Go servers receive carries the same
/// client info header.
/// </summary>
public class NonJetStreamServerInGoClusterTests(ITestOutputHelper output)
{
    /// <param name="proxy">The kind of the fourth server (D), the one without JetStream.</param>
    private static ClusterSpec Spec(string proxy) => new(["go", "go", "go", proxy])
    {
        ExtraConfig = s => (s.Index < 3 ? $$"""jetstream { store_dir: "{{s.StoreDir}}" }""" + "\n" : "") + """
            accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
            system_account: SYS
            """,
    };

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task NatsNetClientsOfTheServerWithoutJetStreamUseTheClustersJetStream(string proxy)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(proxy));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var token = cts.Token;
            var d = cluster[3];
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(d));
            var js = new NatsJSContext(nc);

            var created = await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ORDERS", ["orders.>"]) { NumReplicas = 3 }, token);
            Assert.Contains(created.Info.Cluster!.Leader, new[] { "A", "B", "C" });
            for (var i = 1; i <= 20; i++)
            {
                var ack = await ReplicatedStreamTests.PublishUntilAckedAsync(js, "orders.new", $"m{i}", token);
                Assert.Equal((ulong)i, ack.Seq);
            }
            var account = await js.GetAccountInfoAsync(token);
            Assert.Equal(1, account.Streams);
            Assert.Equal(20, (await js.GetStreamAsync("ORDERS", cancellationToken: token)).Info.State.Messages);

            // A pull durable, fetched and double-acked through D.
            await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("WORKER") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, token);
            var worker = await js.GetConsumerAsync("ORDERS", "WORKER", token);
            Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), await RemoteDeliveryTests.FetchAndAckAsync(worker, "orders.new", 10, token));
            await RemoteDeliveryTests.WaitForAckFloorAsync(js, "ORDERS", "WORKER", 10, token);

            // An ordered consumer reads the whole stream in order.
            var ordered = await js.CreateOrderedConsumerAsync("ORDERS", cancellationToken: token);
            var read = new List<string>();
            await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: token))
            {
                read.Add(msg.Data!);
                if (read.Count == 20)
                {
                    break;
                }
            }
            Assert.Equal(Enumerable.Range(1, 20).Select(i => $"m{i}"), read);

            // Key-Value: a bucket on a Go server, put, get (direct get) and a watch. One replica: Go 2.9.10 answers a direct get from
            // any replica, a follower possibly before it applied the last put, and a client on D reaches each replica alike.
            var kv = new NatsKVContext(js);
            var store = await kv.CreateStoreAsync(new NatsKVConfig("cfg") { History = 5 }, token);
            var r1 = await store.PutAsync("color", "red", cancellationToken: token);
            var r2 = await store.PutAsync("color", "blue", cancellationToken: token);
            Assert.Equal(r1 + 1, r2);
            var entry = await store.GetEntryAsync<string>("color", cancellationToken: token);
            Assert.Equal(("blue", r2), (entry.Value, entry.Revision));
            var watched = new List<string>();
            var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var watch = Task.Run(async () =>
            {
                var opts = new NatsKVWatchOpts { OnNoData = _ => { ready.TrySetResult(); return ValueTask.FromResult(false); } };
                await foreach (var e in store.WatchAsync<string>("w.*", opts: opts, cancellationToken: token))
                {
                    ready.TrySetResult();
                    watched.Add($"{e.Key}={e.Value}");
                    if (watched.Count == 2)
                    {
                        return;
                    }
                }
            }, token);
            await ready.Task.WaitAsync(token);
            await store.PutAsync("w.a", "1", cancellationToken: token);
            await store.PutAsync("w.b", "2", cancellationToken: token);
            await watch.WaitAsync(token);
            Assert.Equal(["w.a=1", "w.b=2"], watched);
            Assert.Equal(2, (await js.GetAccountInfoAsync(token)).Streams);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task NatsGoClientsOfTheServerWithoutJetStreamUseTheClustersJetStream(string proxy)
    {
        await NatsGoProgram.BuildAsync("jsapi");
        await NatsGoProgram.BuildAsync("kvclient");
        await using var cluster = await TestCluster.StartAsync(Spec(proxy));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
            var d = cluster[3];
            Assert.Equal("PASS", await NatsGoProgram.RunAsync("jsapi", TimeSpan.FromMinutes(3), d.Url, "app", "pass", "GO", "3"));
            await using (var nc = new NatsConnection(ReplicatedStreamTests.App(d)))
            {
                await new NatsKVContext(new NatsJSContext(nc)).CreateStoreAsync(new NatsKVConfig("gokv") { History = 5 }, cts.Token);
            }
            Assert.Contains("PASS", await NatsGoProgram.RunAsync("kvclient", TimeSpan.FromMinutes(3), d.Url, "app", "pass", "gokv"));
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    /// <summary>What a JetStream server receives in the system account for a client's API request through D: the request
    /// on its own subject with an <c>_R_</c> reply and Go's client info header naming the account, D and the cluster.</summary>
    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task TheApiRequestReachesTheSystemAccountWithTheClientInfoHeader(string proxy)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(proxy));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
            var token = cts.Token;
            await using var sys = new NatsConnection(new NatsOpts { Url = cluster[0].Url, AuthOpts = new NatsAuthOpts { Username = "sys", Password = "pass" } });
            await using var sub = await sys.SubscribeCoreAsync<string>("$JS.API.STREAM.NAMES", cancellationToken: token);
            await sys.PingAsync(token);
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(cluster[3]));
            // Published again until it arrives: D forwards it once it has A's $JS.API.> interest, which may follow the mesh by a moment.
            NatsMsg<string> seen;
            while (true)
            {
                await nc.PublishAsync("$JS.API.STREAM.NAMES", "{}", replyTo: "_INBOX.names", cancellationToken: token);
                using var wait = CancellationTokenSource.CreateLinkedTokenSource(token);
                wait.CancelAfter(TimeSpan.FromSeconds(2));
                try
                {
                    seen = await sub.Msgs.ReadAsync(wait.Token);
                    break;
                }
                catch (OperationCanceledException) when (!token.IsCancellationRequested)
                {
                }
            }
            Assert.StartsWith("_R_.", seen.ReplyTo);
            using var info = JsonDocument.Parse(seen.Headers!["Nats-Request-Info"].ToString());
            var fields = info.RootElement.EnumerateObject().Select(p => p.Name).ToList();
            Assert.Equal(info.RootElement.TryGetProperty("rtt", out _) ? ["acc", "rtt", "server", "cluster"] : ["acc", "server", "cluster"], fields);
            Assert.Equal(("APP", "D", "T"), (info.RootElement.GetProperty("acc").GetString(), info.RootElement.GetProperty("server").GetString(),
                info.RootElement.GetProperty("cluster").GetString()));
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }
}
