using System.Net.Sockets;
using System.Text;
using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Bad input on the route port, played to a Go server and ours side by side: garbage, a storm of RS+, a route that
/// stops reading. Each ends with the same answer and log line as Go's, and the server's clients never notice.
/// </summary>
public sealed class RoutePortAbuseTests
{
    private static readonly ClusterSpec GoAndOurs = new(["go", "ours"])
    {
        RoutesOf = (_, _) => [],
        WaitForMesh = false,
        ExtraConfig = _ => "write_deadline: \"1s\"",
    };

    [Fact]
    public async Task GarbageIsAProtocolViolation()
    {
        await using var cluster = await TestCluster.StartAsync(GoAndOurs);
        var answers = new List<string>();
        foreach (var server in cluster.Servers)
        {
            using var socket = await ConnectAsync(server.RoutePort);
            await ReadLineAsync(socket);
            await socket.SendAsync("\u0001\u0002garbage\r\n"u8.ToArray(), SocketFlags.None);
            answers.Add(await ReadToEndAsync(socket));
            await server.Log.WaitForAsync("Router connection closed: Protocol Violation");
            await AssertClientsUnaffectedAsync(server);
        }
        Assert.Equal("-ERR 'Unknown Protocol Operation'\r\n", answers[0]);
        Assert.Equal(answers[0], answers[1]);
    }

    [Fact]
    public async Task RsPlusStormIsHeldThenReleased()
    {
        const int storm = 100_000;
        await using var cluster = await TestCluster.StartAsync(GoAndOurs);
        foreach (var server in cluster.Servers)
        {
            using var baseline = await server.GetJsonAsync("/subsz");
            var before = baseline.RootElement.GetProperty("num_subscriptions").GetInt32();
            using var route = await FakeRouteAsync(server, "STORM");
            var lines = new StringBuilder();
            for (var i = 0; i < storm; i++)
            {
                lines.Append("RS+ $G storm.").Append(i).Append("\r\n");
            }
            await SendAllAsync(route, Encoding.ASCII.GetBytes(lines.ToString()));
            using var cts = new CancellationTokenSource(TestCluster.Deadline);
            await TestCluster.WaitForAsync(async () =>
            {
                using var routez = await server.GetJsonAsync("/routez", cts.Token);
                return routez.RootElement.GetProperty("routes").EnumerateArray().Any(r => r.GetProperty("subscriptions").GetInt32() == storm);
            }, $"{server} holds the {storm} RS+", cts.Token);
            await AssertClientsUnaffectedAsync(server);

            route.Close();
            await TestCluster.WaitForAsync(async () =>
            {
                using var subsz = await server.GetJsonAsync("/subsz", cts.Token);
                return subsz.RootElement.GetProperty("num_subscriptions").GetInt32() == before;
            }, $"{server} releases the storm's interest with the route", cts.Token);
        }
    }

    [Fact]
    public async Task RouteThatStopsReadingIsClosed()
    {
        await using var cluster = await TestCluster.StartAsync(GoAndOurs);
        var lines = new List<string>();
        foreach (var server in cluster.Servers)
        {
            // A peer that takes everything on "flood" and then reads nothing at all.
            using var route = await FakeRouteAsync(server, "STUCK", receiveBuffer: 4096);
            await SendAllAsync(route, "RS+ $G flood\r\n"u8.ToArray());
            var publisher = await WireClient.ConnectAsync(server.ClientPort);
            using var cts = new CancellationTokenSource(TestCluster.Deadline);
            var frame = $"PUB flood 65536\r\n{new string('x', 65536)}\r\n";
            using var stopPublishing = new CancellationTokenSource();
            var publishing = Task.Run(async () =>
            {
                while (!stopPublishing.IsCancellationRequested)
                {
                    await publisher.SendAsync(frame);
                    await Task.Delay(5, CancellationToken.None);
                }
            }, CancellationToken.None);
            try
            {
                var (line, _) = await server.Log.WaitForAsync("Slow Consumer Detected", timeout: TestCluster.Deadline);
                lines.Add(line[line.IndexOf("Slow Consumer", StringComparison.Ordinal)..]);
                // Clients on the server are served while the route is stuck, and after it is gone.
                await AssertClientsUnaffectedAsync(server);
                await server.Log.WaitForAsync("Router connection closed: Slow Consumer (Write Deadline)", timeout: TestCluster.Deadline);
                // The close is logged before the route leaves the table.
                await TestCluster.WaitForAsync(async () => (await server.RoutedPeersAsync(cts.Token)).Count == 0, $"{server} forgets the stuck route", cts.Token);
                await AssertClientsUnaffectedAsync(server);
                Assert.False(publishing.IsFaulted, $"the publisher's connection broke: {publishing.Exception}");
                Assert.Empty(publisher.Errors);
            }
            finally
            {
                await stopPublishing.CancelAsync();
                await publisher.DisposeAsync();
                try
                {
                    await publishing;
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
                {
                }
            }
        }
        Assert.All(lines, l => Assert.StartsWith("Slow Consumer Detected: WriteDeadline of 1s exceeded", l));
    }

    private static async Task AssertClientsUnaffectedAsync(ClusterServer server)
    {
        var received = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var subscriber = await WireClient.ConnectAsync(server.ClientPort, (_, _, payload) => received.TrySetResult(payload));
        await subscriber.SendAsync("SUB unaffected 1\r\n");
        await subscriber.PingAsync();
        await using var publisher = await WireClient.ConnectAsync(server.ClientPort);
        await publisher.SendAsync("PUB unaffected 2\r\nok\r\n");
        Assert.Equal("ok", await received.Task.WaitAsync(TestCluster.Deadline));
    }

    /// <summary>A route handshake as a peer named <paramref name="name"/> of cluster T.</summary>
    private static async Task<Socket> FakeRouteAsync(ClusterServer server, string name, int? receiveBuffer = null)
    {
        var socket = await ConnectAsync(server.RoutePort, receiveBuffer);
        await ReadLineAsync(socket);
        var hello = $"CONNECT {{\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"headers\":true,\"name\":\"{name}\",\"cluster\":\"T\",\"lnoc\":true}}\r\n"
            + $"INFO {{\"server_id\":\"{name}\",\"server_name\":\"{name}\",\"version\":\"2.9.10\",\"proto\":2,\"host\":\"127.0.0.1\",\"port\":1,\"headers\":true,\"max_payload\":1048576,\"cluster\":\"T\",\"lnoc\":true}}\r\n";
        await SendAllAsync(socket, Encoding.ASCII.GetBytes(hello));
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        await TestCluster.WaitForAsync(async () => (await server.RoutedPeersAsync(cts.Token)).Contains(name), $"{server} registers route {name}", cts.Token);
        return socket;
    }

    private static async Task<Socket> ConnectAsync(int port, int? receiveBuffer = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        if (receiveBuffer is { } size)
        {
            socket.ReceiveBufferSize = size;
        }
        await socket.ConnectAsync("127.0.0.1", port);
        return socket;
    }

    private static async Task SendAllAsync(Socket socket, byte[] data)
    {
        for (var sent = 0; sent < data.Length;)
        {
            sent += await socket.SendAsync(data.AsMemory(sent), SocketFlags.None);
        }
    }

    private static async Task<string> ReadLineAsync(Socket socket)
    {
        var line = new StringBuilder();
        var one = new byte[1];
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (!line.ToString().EndsWith('\n'))
        {
            if (await socket.ReceiveAsync(one, SocketFlags.None, cts.Token) == 0)
            {
                break;
            }
            line.Append((char)one[0]);
        }
        return line.ToString();
    }

    private static async Task<string> ReadToEndAsync(Socket socket)
    {
        var all = new StringBuilder();
        var buffer = new byte[8192];
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        int n;
        while ((n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token)) > 0)
        {
            all.Append(Encoding.ASCII.GetString(buffer, 0, n));
        }
        return all.ToString();
    }
}
