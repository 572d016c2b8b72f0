using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// A subscriber that stops reading while an unpaced publisher feeds it is cut by both servers; operators grep
/// for Go's line, so ours logs the same words (Go cuts when its blocked write passes write_deadline, ours when a
/// waiting publisher sees no write progress for the same bound).
/// </summary>
public sealed partial class SlowConsumerLogTests
{
    private static readonly ClusterSpec GoAndOurs = new(["go", "ours"])
    {
        RoutesOf = (_, _) => [],
        WaitForMesh = false,
        ExtraConfig = _ => "write_deadline: \"1s\"",
    };

    [GeneratedRegex(@"Slow Consumer Detected: WriteDeadline of 1s exceeded with [1-9][0-9]* chunks of [1-9][0-9]* total bytes\.$")]
    private static partial Regex GoLine();

    [Fact]
    public async Task StuckSubscriberIsCutWithGosLogLine()
    {
        await using var cluster = await TestCluster.StartAsync(GoAndOurs);
        var lines = new List<string>();
        foreach (var server in cluster.Servers)
        {
            using var stuck = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
            await stuck.ConnectAsync("127.0.0.1", server.ClientPort);
            // INFO is read by nobody: this client never reads at all.
            await SendAllAsync(stuck, "CONNECT {\"verbose\":false}\r\nSUB flood 1\r\n"u8.ToArray());
            var publisher = await WireClient.ConnectAsync(server.ClientPort);
            await publisher.PingAsync();
            var frame = $"PUB flood 65536\r\n{new string('x', 65536)}\r\n";
            using var stopPublishing = new CancellationTokenSource();
            var publishing = Task.Run(async () =>
            {
                while (!stopPublishing.IsCancellationRequested)
                {
                    await publisher.SendAsync(frame);
                    // ~13 MB/s: Go's blocked write reaches its deadline long before max_pending (64 MB) fills.
                    await Task.Delay(5, CancellationToken.None);
                }
            }, CancellationToken.None);
            try
            {
                var (line, _) = await server.Log.WaitForAsync("Slow Consumer Detected", timeout: TestCluster.Deadline);
                lines.Add($"{server}: {line}");
            }
            finally
            {
                await stopPublishing.CancelAsync();
                await publisher.DisposeAsync();
                try
                {
                    await publishing;
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException or IOException)
                {
                }
            }
        }
        Assert.Equal(2, lines.Count);
        Assert.All(lines, l => Assert.Matches(GoLine(), l.TrimEnd()));
    }

    private static async Task SendAllAsync(Socket socket, byte[] data)
    {
        for (var sent = 0; sent < data.Length;)
        {
            sent += await socket.SendAsync(data.AsMemory(sent), SocketFlags.None);
        }
    }
}
