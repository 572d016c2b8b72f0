using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Two and three servers joined by routes, in every mix of ours and Go's 2.9.10: clients on different
/// servers exchange messages (wildcards, headers, request/reply, queue groups exactly once), interest
/// follows unsubscribes, a restarted server rejoins, and our route INFO matches Go's. Every server is a real
/// process (<see cref="TestCluster"/>).
/// </summary>
public sealed class RouteInteropTests
{
    private static readonly TimeSpan Deadline = TestCluster.Deadline;

    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task PubSubWildcardsAndHeadersCrossTheRoute(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var subscriber = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var publisher = new NatsConnection(new NatsOpts { Url = b.Url });

        await using var star = await subscriber.SubscribeCoreAsync<string>("orders.*");
        await using var full = await subscriber.SubscribeCoreAsync<string>("orders.>");
        await UntilReceivedAsync(publisher, "orders.probe", star);
        await UntilReceivedAsync(publisher, "orders.probe", full);

        await publisher.PublishAsync("orders.new", "o1");
        await publisher.PublishAsync("orders.eu.new", "o2");
        await publisher.PublishAsync("orders.hdr", "o3", headers: new NatsHeaders { ["X-Trace"] = "t1" });

        var first = await NextAsync(star, "orders.probe");
        Assert.Equal(("orders.new", "o1"), (first.Subject, first.Data));
        var withHeaders = await NextAsync(star, "orders.probe");
        Assert.Equal("o3", withHeaders.Data);
        Assert.Equal("t1", withHeaders.Headers?["X-Trace"].ToString());

        Assert.Equal("o1", (await NextAsync(full, "orders.probe")).Data);
        var second = await NextAsync(full, "orders.probe");
        Assert.Equal(("orders.eu.new", "o2"), (second.Subject, second.Data));
        Assert.Equal("o3", (await NextAsync(full, "orders.probe")).Data);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RequestReplyCrossesTheRoute(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var responder = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var requester = new NatsConnection(new NatsOpts { Url = b.Url, RequestTimeout = TimeSpan.FromSeconds(2) });

        await using var service = await responder.SubscribeCoreAsync<string>("svc.upper");
        var serving = Task.Run(async () =>
        {
            await foreach (var msg in service.Msgs.ReadAllAsync())
            {
                await msg.ReplyAsync(msg.Data!.ToUpperInvariant());
            }
        });

        using var cts = new CancellationTokenSource(Deadline);
        string? answer = null;
        while (answer is null)
        {
            cts.Token.ThrowIfCancellationRequested();
            try
            {
                answer = (await requester.RequestAsync<string, string>("svc.upper", "hello", cancellationToken: cts.Token)).Data;
            }
            catch (NatsNoRespondersException)
            {
                // The responder's interest has not reached the requester's server yet.
                await Task.Delay(50, cts.Token);
            }
        }
        Assert.Equal("HELLO", answer);
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal($"N{i}", (await requester.RequestAsync<string, string>("svc.upper", $"n{i}", cancellationToken: cts.Token)).Data);
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task QueueGroupDeliversEachMessageOnceClusterWide(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var onA = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url });

        var received = new ConcurrentDictionary<string, int>();
        var perServer = new int[2];
        var members = new List<INatsSub<string>>
        {
            await onA.SubscribeCoreAsync<string>("jobs", queueGroup: "workers"),
            await onA.SubscribeCoreAsync<string>("jobs", queueGroup: "workers"),
            await onB.SubscribeCoreAsync<string>("jobs", queueGroup: "workers"),
        };
        var probeLandedOnA = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var readers = members.Select((member, index) => Task.Run(async () =>
        {
            await foreach (var msg in member.Msgs.ReadAllAsync())
            {
                if (msg.Data == "probe")
                {
                    if (index < 2)
                    {
                        probeLandedOnA.TrySetResult();
                    }
                    continue;
                }
                received.AddOrUpdate(msg.Data!, 1, (_, n) => n + 1);
                Interlocked.Increment(ref perServer[index < 2 ? 0 : 1]);
            }
        })).ToList();

        // Publish from B until A's queue interest has reached it (a probe lands on one of A's members).
        using var cts = new CancellationTokenSource(Deadline);
        while (!probeLandedOnA.Task.IsCompleted)
        {
            await onB.PublishAsync("jobs", "probe", cancellationToken: cts.Token);
            await Task.WhenAny(probeLandedOnA.Task, Task.Delay(100, cts.Token));
        }

        const int count = 300;
        for (var i = 0; i < count; i++)
        {
            await (i % 2 == 0 ? onA : onB).PublishAsync("jobs", $"m{i}", cancellationToken: cts.Token);
        }
        while (received.Count < count)
        {
            cts.Token.ThrowIfCancellationRequested();
            await Task.Delay(20, cts.Token);
        }
        // One more round trip on every path: anything duplicated would have arrived by now.
        await onA.PingAsync(cts.Token);
        await onB.PingAsync(cts.Token);
        await onB.PublishAsync("jobs", "probe", cancellationToken: cts.Token);
        await onA.PingAsync(cts.Token);

        Assert.Equal(count, received.Count);
        Assert.All(received.Values, n => Assert.Equal(1, n));
        Assert.True(perServer[0] > 0 && perServer[1] > 0, $"both servers' members served: A {perServer[0]}, B {perServer[1]}");
        foreach (var member in members)
        {
            await member.DisposeAsync();
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task UnsubscribeStopsDeliveryAcrossTheRoute(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, kindB);
        var (a, b) = (cluster[0], cluster[1]);
        await using var subscriber = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var publisher = new NatsConnection(new NatsOpts { Url = b.Url });

        await using var sentinel = await subscriber.SubscribeCoreAsync<string>("sentinel");
        var leaving = await subscriber.SubscribeCoreAsync<string>("leaving.>");
        await UntilReceivedAsync(publisher, "leaving.probe", leaving);
        await UntilReceivedAsync(publisher, "sentinel", sentinel);
        await leaving.UnsubscribeAsync();

        using var cts = new CancellationTokenSource(Deadline);
        // The publisher's server forgets the interest (RS- arrived): nothing goes out on the route any more.
        await TestCluster.WaitForAsync(async () => !(await b.RouteSubjectsFromAsync(a, cts.Token)).Contains("leaving.>"),
            $"{b} drops A's interest in leaving.>", cts.Token);
        await using var again = await subscriber.SubscribeCoreAsync<string>("leaving.again");
        await UntilReceivedAsync(publisher, "leaving.again", again);
        await publisher.PublishAsync("leaving.x", "late", cancellationToken: cts.Token);
        await publisher.PublishAsync("sentinel", "mark", cancellationToken: cts.Token);
        Assert.Equal("mark", (await NextAsync(sentinel, "sentinel")).Data);
        Assert.False(leaving.Msgs.TryRead(out var stale) && stale.Data == "late", "an unsubscribed subject was still delivered across the route");
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task ThreeServersLearnEachOtherByGossip(string middle)
    {
        // A and C only know B; B's gossip makes them dial each other (through C's and A's advertised proxies).
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec(["ours", middle, "ours"])
        {
            RoutesOf = (self, _) => self == 1 ? [] : [1],
        });
        var (a, c) = (cluster[0], cluster[2]);

        await using var subscriber = new NatsConnection(new NatsOpts { Url = c.Url });
        await using var publisher = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var sub = await subscriber.SubscribeCoreAsync<string>("gossip.>");
        await UntilReceivedAsync(publisher, "gossip.probe", sub);
        await publisher.PublishAsync("gossip.hello", "direct");
        Assert.Equal("direct", (await NextAsync(sub, "gossip.probe")).Data);
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task RestartedServerRejoinsAndTrafficFlowsAgain(string peerKind)
    {
        await using var cluster = await TestCluster.StartAsync("ours", peerKind);
        var (a, b) = (cluster[0], cluster[1]);
        await using var subscriber = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var sub = await subscriber.SubscribeCoreAsync<string>("restart.>");

        await using (var publisher = new NatsConnection(new NatsOpts { Url = a.Url }))
        {
            await UntilReceivedAsync(publisher, "restart.probe", sub);
        }
        await cluster.KillAsync(0);
        await cluster.RestartAsync(0);
        await cluster.WaitForMeshAsync();

        await using var publisher2 = new NatsConnection(new NatsOpts { Url = a.Url });
        await UntilReceivedAsync(publisher2, "restart.probe", sub);
        await publisher2.PublishAsync("restart.after", "back");
        Assert.Equal("back", (await NextAsync(sub, "restart.probe")).Data);
    }

    [Fact]
    public async Task ClientsLearnTheClusterInConnectUrls()
    {
        await using var cluster = await TestCluster.StartAsync("ours", "go");
        var (a, b) = (cluster[0], cluster[1]);
        await cluster.KillAsync(1);
        await cluster.WaitForMeshAsync();
        await using var raw = await Core.RawClient.ConnectAsync(a.ClientPort);
        await raw.ConnectAndReadInfoAsync("{\"verbose\":false,\"protocol\":1}");
        // Async INFOs go to clients past their first PONG, as in Go.
        await raw.SyncAsync();
        await cluster.RestartAsync(1);
        var received = await raw.ReadUntilAsync($"127.0.0.1:{b.ClientPort}", Deadline);
        received += await raw.ReadUntilAsync("\r\n", Deadline);
        var line = received[received.LastIndexOf("INFO {", StringComparison.Ordinal)..];
        using var info = JsonDocument.Parse(line[5..line.IndexOf("\r\n", StringComparison.Ordinal)]);
        var urls = info.RootElement.GetProperty("connect_urls").EnumerateArray().Select(u => u.GetString()).ToList();
        Assert.Equal([$"127.0.0.1:{a.ClientPort}", $"127.0.0.1:{b.ClientPort}"], urls);
    }

    [Fact]
    public async Task RouteInfoMatchesGo()
    {
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec(["go", "ours"]) { RoutesOf = (_, _) => [], WaitForMesh = false });
        var (go, ours) = (cluster[0], cluster[1]);
        var goInfo = Normalise(await ReadRouteInfoAsync(go.RoutePort), go);
        var oursInfo = Normalise(await ReadRouteInfoAsync(ours.RoutePort), ours);
        Assert.Equal(goInfo, oursInfo);
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task RoutezListsTheRouteAndItsSubscriptions(string kindA)
    {
        await using var cluster = await TestCluster.StartAsync(kindA, "go");
        var (a, b) = (cluster[0], cluster[1]);
        await using var subscriber = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var publisher = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var sub = await subscriber.SubscribeCoreAsync<string>("routez.watch");
        await UntilReceivedAsync(publisher, "routez.watch", sub);

        using var routez = await a.GetJsonAsync("/routez?subs=1");
        var route = Assert.Single(routez.RootElement.GetProperty("routes").EnumerateArray().ToList());
        Assert.Equal(1, routez.RootElement.GetProperty("num_routes").GetInt32());
        Assert.Equal(b.ServerId, route.GetProperty("remote_id").GetString());
        Assert.Equal("127.0.0.1", route.GetProperty("ip").GetString());
        Assert.True(route.GetProperty("out_msgs").GetInt64() >= 1);
        var subs = route.GetProperty("subscriptions_list").EnumerateArray().Select(e => e.GetString()).ToList();
        Assert.Contains("routez.watch", subs);
        Assert.Equal(route.GetProperty("subscriptions").GetInt32(), subs.Count);
        using var varz = await a.GetJsonAsync("/varz");
        Assert.Equal(1, varz.RootElement.GetProperty("routes").GetInt32());
    }

    [Fact]
    public async Task RouteRejectionsMatchGo()
    {
        // A (Go) and B (ours) alone; C (Go) routes to B only.
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec(["go", "ours", "go"])
        {
            RoutesOf = (self, _) => self == 2 ? [1] : [],
            WaitForMesh = false,
        });
        var (go, ours, peer) = (cluster[0], cluster[1], cluster[2]);
        foreach (var connect in new[]
        {
            "CONNECT {\"verbose\":false,\"lang\":\"go\",\"version\":\"1.0\"}\r\n",
            "CONNECT {\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"headers\":true,\"name\":\"NTEST\",\"cluster\":\"OTHER\"}\r\n",
        })
        {
            Assert.Equal(await RouteAnswerAsync(go.RoutePort, connect), await RouteAnswerAsync(ours.RoutePort, connect));
        }
        // The server is unaffected: its route with the right name carries traffic.
        using var cts = new CancellationTokenSource(Deadline);
        await TestCluster.WaitForAsync(async () => (await ours.RoutedPeersAsync(cts.Token)).SetEquals([peer.ServerId]), "B routed to C", cts.Token);
        await using var subscriber = new NatsConnection(new NatsOpts { Url = peer.Url });
        await using var publisher = new NatsConnection(new NatsOpts { Url = ours.Url });
        await using var sub = await subscriber.SubscribeCoreAsync<string>("after.rejections");
        await UntilReceivedAsync(publisher, "after.rejections", sub);
    }

    /// <summary>What a route port answers <paramref name="connect"/> with, after its INFO, until it closes.</summary>
    private static async Task<string> RouteAnswerAsync(int port, string connect)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync("127.0.0.1", port);
        await socket.SendAsync(Encoding.UTF8.GetBytes(connect), SocketFlags.None);
        var all = new StringBuilder();
        var buffer = new byte[8192];
        using var cts = new CancellationTokenSource(Deadline);
        while (true)
        {
            var n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (n == 0)
            {
                break;
            }
            all.Append(Encoding.UTF8.GetString(buffer, 0, n));
        }
        var text = all.ToString();
        return text[(text.IndexOf("\r\n", StringComparison.Ordinal) + 2)..];
    }

    private static async Task<string> ReadRouteInfoAsync(int port)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync("127.0.0.1", port);
        var buffer = new byte[8192];
        var length = 0;
        using var cts = new CancellationTokenSource(Deadline);
        while (Array.IndexOf(buffer, (byte)'\n', 0, length) < 0)
        {
            length += await socket.ReceiveAsync(buffer.AsMemory(length), SocketFlags.None, cts.Token);
        }
        return Encoding.UTF8.GetString(buffer, 0, length);
    }

    /// <summary>The INFO's field names in order, with the values that differ per process replaced.</summary>
    private static string Normalise(string line, ClusterServer server)
    {
        var ports = new[] { (server.ClientPort, "<client>"), (server.RoutePort, "<route>"), (server.Proxy.Port, "<advertised>") };
        Assert.StartsWith("INFO {", line);
        Assert.EndsWith("} \r\n", line);
        using var doc = JsonDocument.Parse(line[5..^3]);
        var parts = new List<string>();
        foreach (var p in doc.RootElement.EnumerateObject())
        {
            var value = p.Name switch
            {
                "server_id" or "server_name" or "go" or "nonce" => "<" + p.Name + ">",
                _ => ports.Aggregate(p.Value.GetRawText(),
                    (text, port) => text.Replace(port.Item1.ToString(System.Globalization.CultureInfo.InvariantCulture), port.Item2)),
            };
            parts.Add($"{p.Name}={value}");
        }
        return string.Join("\n", parts);
    }
}
