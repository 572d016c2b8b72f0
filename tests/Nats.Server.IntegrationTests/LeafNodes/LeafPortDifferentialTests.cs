using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// The leaf port of a Go 2.9.10 hub and of ours, side by side, given the same input by a scripted leaf: bad input
/// (garbage before CONNECT, wrong credentials, a client's CONNECT, an unknown verb, a malformed LS+) gets the same
/// answer and the same log line and closes only that connection; and /leafz?subs=1 describes an accepted leaf alike.
/// </summary>
public sealed partial class LeafPortDifferentialTests
{
    private const string Connect = "CONNECT {\"user\":\"spoke\",\"pass\":\"s3cret\",\"name\":\"fake\",\"headers\":true}\r\n";

    public static TheoryData<string, string, string> Inputs => new()
    {
        { "garbage before CONNECT", "\u0001\u0002garbage\r\n", "authentication error" },
        { "wrong password", "CONNECT {\"user\":\"spoke\",\"pass\":\"wrong\",\"name\":\"fake\"}\r\n", "authentication error" },
        { "a client's CONNECT", "CONNECT {\"user\":\"spoke\",\"pass\":\"s3cret\",\"lang\":\"go\",\"version\":\"1.0\"}\r\n", "attempted to connect to leaf node port" },
        { "unknown verb", Connect + "FOO bar\r\n", "parser ERROR" },
        { "LS+ with four arguments", Connect + "LS+ a b c d\r\n", "processLeafSub Parse Error" },
    };

    [Theory]
    [MemberData(nameof(Inputs))]
    public async Task BadInputGetsGoAnswerAndLogLine(string what, string input, string logged)
    {
        var ports = new[] { FreePort(), FreePort() };
        await using var hubs = await TestCluster.StartAsync(new ClusterSpec(["go", "ours"])
        {
            RoutesOf = (_, _) => [],
            WaitForMesh = false,
            ExtraConfig = s => $"leafnodes {{ listen: \"127.0.0.1:{ports[s.Index]}\", authorization {{ user: spoke, password: s3cret }} }}",
        });
        var answers = new List<string>();
        var lines = new List<string>();
        foreach (var server in hubs.Servers)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync(IPAddress.Loopback, ports[server.Index]);
            var info = await ReadLineAsync(socket);
            Assert.StartsWith("INFO {", info, StringComparison.Ordinal);
            await socket.SendAsync(Encoding.ASCII.GetBytes(input), SocketFlags.None);
            // The errors that come back (after a good CONNECT the hub's INFO and interest differ by server id and port).
            answers.Add(string.Join("", Regex.Split(await ReadToEndAsync(socket), "(?<=\r\n)").Where(l => l.StartsWith("-ERR", StringComparison.Ordinal))));
            var (line, index) = await server.Log.WaitForAsync(logged, timeout: TestCluster.Deadline);
            var (closed, _) = await server.Log.WaitForAsync("Leafnode connection closed", index, TestCluster.Deadline);
            lines.Add(Normalize(line) + "\n" + Normalize(closed));
            // Nothing else is disturbed.
            await using var client = new NatsConnection(new NatsOpts { Url = server.Url });
            await client.PingAsync();
        }
        Assert.True(answers[0] == answers[1], $"{what}: Go answered {answers[0]}, ours {answers[1]}");
        Assert.True(lines[0] == lines[1], $"{what}: Go logged\n{lines[0]}\nours\n{lines[1]}");
    }

    [Fact]
    public async Task LeafzDescribesAnAcceptedLeafAsGoDoes()
    {
        var ports = new[] { FreePort(), FreePort() };
        await using var hubs = await TestCluster.StartAsync(new ClusterSpec(["go", "ours"])
        {
            RoutesOf = (_, _) => [],
            WaitForMesh = false,
            ExtraConfig = s => $"leafnodes {{ listen: \"127.0.0.1:{ports[s.Index]}\", authorization {{ user: spoke, password: s3cret }} }}",
        });
        var documents = new List<string>();
        var sockets = new List<Socket>();
        try
        {
            foreach (var server in hubs.Servers)
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                sockets.Add(socket);
                await socket.ConnectAsync(IPAddress.Loopback, ports[server.Index]);
                await ReadLineAsync(socket);
                await socket.SendAsync(Encoding.ASCII.GetBytes(Connect + "LS+ orders.>\r\nLS+ jobs workers 3\r\nPING\r\n"), SocketFlags.None);
                using var cts = new CancellationTokenSource(TestCluster.Deadline);
                JsonNode? leafz = null;
                await TestCluster.WaitForAsync(async () =>
                {
                    using var document = await server.GetJsonAsync("/leafz?subs=1", cts.Token);
                    leafz = JsonNode.Parse(document.RootElement.GetRawText());
                    return leafz!["leafs"] is JsonArray { Count: 1 } leafs && leafs[0]!["subscriptions"]!.GetValue<int>() == 2;
                }, $"{server} lists the leaf and its two subscriptions", cts.Token);
                foreach (var volatileField in new[] { "server_id", "now" })
                {
                    leafz!.AsObject().Remove(volatileField);
                }
                var leaf = leafz!["leafs"]![0]!.AsObject();
                leaf.Remove("port");
                leaf.Remove("rtt");
                var subs = leaf["subscriptions_list"]!.AsArray().Select(s => s!.GetValue<string>()).Order().ToList();
                leaf["subscriptions_list"] = new JsonArray([.. subs.Select(s => JsonValue.Create(s))]);
                documents.Add(leafz.ToJsonString());
            }
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket.Dispose();
            }
        }
        Assert.Equal(documents[0], documents[1]);
    }

    [Fact]
    public async Task VarzLeafBlockIsGos()
    {
        var ports = new[] { FreePort(), FreePort() };
        var nowhere = FreePort();
        await using var servers = await TestCluster.StartAsync(new ClusterSpec(["go", "ours"])
        {
            RoutesOf = (_, _) => [],
            WaitForMesh = false,
            ExtraConfig = s => $$"""
                leafnodes {
                  listen: "127.0.0.1:{{ports[s.Index]}}"
                  remotes [ { url: "nats-leaf://u:p@127.0.0.1:{{nowhere}}", deny_imports: ["a.>"], deny_exports: "b" } ]
                }
                """,
        });
        var blocks = new List<string>();
        foreach (var server in servers.Servers)
        {
            using var varz = await server.GetJsonAsync("/varz");
            var leaf = JsonNode.Parse(varz.RootElement.GetProperty("leaf").GetRawText())!.AsObject();
            Assert.Equal(ports[server.Index], leaf["port"]!.GetValue<int>());
            leaf.Remove("port");
            blocks.Add(leaf.ToJsonString() + " leafnodes=" + varz.RootElement.GetProperty("leafnodes").GetInt32());
        }
        Assert.Equal(blocks[0], blocks[1]);
    }

    /// <summary>A log line without what differs between two runs: pid, time, the peer's port and the connection id.</summary>
    private static string Normalize(string line) => LogPrefix().Replace(line, "");

    [GeneratedRegex(@"^\[\d+\] \S+ \S+ \[\w+\] 127\.0\.0\.1:\d+ - lid:\d+ - ")]
    private static partial Regex LogPrefix();

    private static async Task<string> ReadLineAsync(Socket socket)
    {
        var bytes = new List<byte>();
        var one = new byte[1];
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (await socket.ReceiveAsync(one, SocketFlags.None, cts.Token) == 1)
        {
            bytes.Add(one[0]);
            if (one[0] == '\n')
            {
                break;
            }
        }
        return Encoding.ASCII.GetString([.. bytes]);
    }

    private static async Task<string> ReadToEndAsync(Socket socket)
    {
        var text = new StringBuilder();
        var buffer = new byte[4096];
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        int n;
        while ((n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token)) > 0)
        {
            text.Append(Encoding.ASCII.GetString(buffer, 0, n));
        }
        return text.ToString();
    }

    private static int FreePort() => Infrastructure.FreePorts.Next();
}
