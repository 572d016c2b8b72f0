using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// Bad input on the gateway port, played to a Go server and ours side by side (each with a gateway user): garbage,
/// wrong credentials, a client that dialled the gateway port. Each gets Go's -ERR and log lines and a closed
/// connection, and the server's clients never notice.
/// </summary>
public sealed partial class GatewayPortAbuseTests
{
    public static TheoryData<string, string, string> Cases => new()
    {
        { "garbage", "\u0001\u0002garbage\r\n", "Authentication Failure" },
        { "wrong credentials", "CONNECT {\"gateway\":\"X\",\"user\":\"gw\",\"pass\":\"wrong\"}\r\n", "Authentication Failure" },
        { "client", "CONNECT {\"verbose\":false,\"lang\":\"go\",\"user\":\"gw\",\"pass\":\"pw\"}\r\n", "Incorrect Port" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task RefusedAsGoRefusesIt(string what, string input, string reason)
    {
        var ports = new[] { FreePort(), FreePort() };
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec(["go", "ours"])
        {
            ClusterName = "G",
            RoutesOf = (_, _) => [],
            WaitForMesh = false,
            ExtraConfig = s => $"gateway {{ name: G, listen: \"127.0.0.1:{ports[s.Index]}\", authorization {{ user: gw, password: pw }} }}",
        });
        var answers = new List<string>();
        var logs = new List<string>();
        foreach (var server in cluster.Servers)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync("127.0.0.1", ports[server.Index]);
            var info = await ReadLineAsync(socket);
            Assert.StartsWith("INFO {", info, StringComparison.Ordinal);
            var (_, start) = await server.Log.WaitForAsync("Processing inbound gateway connection");
            await socket.SendAsync(Encoding.ASCII.GetBytes(input), SocketFlags.None);
            answers.Add(await ReadToEndAsync(socket));
            var (_, closed) = await server.Log.WaitForAsync($"Gateway connection closed: {reason}", start);
            logs.Add(string.Join("\n", server.Log.Text.Split('\n').Skip(start).Take(closed - start + 1).Select(Strip).Where(l => l.Length > 0)));
            await using var client = new NatsConnection(new NatsOpts { Url = server.Url });
            await client.PingAsync();
        }
        Assert.Equal(answers[0], answers[1]);
        Assert.StartsWith("-ERR '", answers[0], StringComparison.Ordinal);
        Assert.True(logs[0] == logs[1], $"{what}: Go logged\n{logs[0]}\nours\n{logs[1]}");
    }

    /// <summary>The part of a log line after the connection name (no time, pid or port).</summary>
    private static string Strip(string line)
    {
        var match = GidPattern().Match(line);
        return match.Success ? match.Groups[1].Value.TrimEnd('\r') : "";
    }

    [GeneratedRegex(@" - gid:\d+ - (.*)$")]
    private static partial Regex GidPattern();

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
        return Encoding.ASCII.GetString(bytes.ToArray());
    }

    private static async Task<string> ReadToEndAsync(Socket socket)
    {
        var buffer = new byte[4096];
        var text = new StringBuilder();
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
