using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Text;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Flow control across a route: a subscriber that stops reading on one server never slows or cuts
/// the route that feeds it, and the other subscribers there still get every message.
/// </summary>
public sealed class RouteFlowControlTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    private const int Messages = 20_000;
    private const int PayloadSize = 1024;

    public static TheoryData<string> PublisherSides => new() { "ours", "go" };

    [Theory]
    [MemberData(nameof(PublisherSides))]
    public async Task ARouteStaysUpWhileASubscriberOnTheFarSideIsStuck(string publisherKind)
    {
        int portA = ClusterNode.FreePort(), portB = ClusterNode.FreePort();
        await using var a = await ClusterNode.StartAsync(publisherKind, portA, [portB]);
        await using var b = await ClusterNode.StartAsync("ours", portB, [portA]);
        using var cts = new CancellationTokenSource(Deadline);

        // A raw subscriber with a tiny receive buffer that stops reading once subscribed: its queue on B
        // fills with 20 MB while the route and the other subscriber keep going.
        using var stuck = await SubscribeAndStopReadingAsync(new Uri(b.Url).Port, "data", cts.Token);
        await using var healthy = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var sub = await healthy.SubscribeCoreAsync<byte[]>("data");
        await using var publisher = new NatsConnection(new NatsOpts { Url = a.Url });
        await ProbeAsync(publisher, sub, cts.Token);
        var route = Assert.Single(b.Ours!.Cluster!.Table.Registered);

        var payload = new byte[PayloadSize];
        var publishing = Task.Run(async () =>
        {
            for (var i = 0; i < Messages; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(payload, i);
                await publisher.PublishAsync("data", payload, cancellationToken: cts.Token);
            }
        }, cts.Token);

        var next = 0;
        while (next < Messages)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            if (msg.Data is not { Length: PayloadSize } data)
            {
                continue; // a leftover probe
            }
            Assert.Equal(next, BinaryPrimitives.ReadInt32LittleEndian(data));
            next++;
        }
        await publishing;

        Assert.Same(route, Assert.Single(b.Ours.Cluster.Table.Registered));
        Assert.False(route.IsClosed);
        Assert.Null(route.ClosedReason);

        // The stuck subscriber really fell behind: a backlog held for it, or cut as a slow consumer.
        var stuckPort = ((IPEndPoint)stuck.LocalEndPoint!).Port;
        var stuckClient = b.Ours.Clients.SingleOrDefault(c => c.RemotePort == stuckPort);
        var fellBehind = stuckClient is null
            ? b.Ours.SlowConsumers > 0
            : stuckClient.IsClosed || stuckClient.Outbound.PendingAndInFlight > 1024 * 1024;
        Assert.True(fellBehind, $"the stuck subscriber holds only {stuckClient?.Outbound.PendingAndInFlight} bytes");
    }

    /// <summary>CONNECT, SUB and a PING answered; after that the socket is never read again.</summary>
    private static async Task<Socket> SubscribeAndStopReadingAsync(int port, string subject, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cancellationToken);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"CONNECT {{\"verbose\":false}}\r\nSUB {subject} 1\r\nPING\r\n"), cancellationToken);
        var seen = new StringBuilder();
        var buffer = new byte[4096];
        while (!seen.ToString().Contains("PONG\r\n", StringComparison.Ordinal))
        {
            var n = await socket.ReceiveAsync(buffer, cancellationToken);
            Assert.True(n > 0, "the server closed the raw subscriber before its PONG");
            seen.Append(Encoding.ASCII.GetString(buffer, 0, n));
        }
        return socket;
    }

    /// <summary>Publishes probes until <paramref name="sub"/> sees one: the interest has crossed the route.</summary>
    private static async Task ProbeAsync(NatsConnection publisher, INatsSub<byte[]> sub, CancellationToken cancellationToken)
    {
        while (true)
        {
            await publisher.PublishAsync("data", "probe"u8.ToArray(), cancellationToken: cancellationToken);
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            wait.CancelAfter(TimeSpan.FromMilliseconds(200));
            try
            {
                await sub.Msgs.ReadAsync(wait.Token);
                return;
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
            }
        }
    }
}
