using System.Net;
using System.Net.Sockets;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Monitoring;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>Starting, stopping and binding the monitoring port; /healthz; the closed-connection ring.</summary>
public sealed class MonitoringHostTests
{
    [Fact]
    public async Task Off_WhenHttpPortIsZero()
    {
        await using var server = new NatsServer(new ServerOptions { Host = "127.0.0.1", Port = 0 });
        await server.StartAsync();
        Assert.Equal(0, server.MonitoringPort);
    }

    [Fact]
    public async Task Healthz_OkWhileRunning_PortClosedAfterShutdown()
    {
        var server = await OurMonitoredServer.StartAsync();
        var port = server.MonitorPort;
        Assert.NotEqual(0, port);
        var health = await server.GetAsync("/healthz");
        Assert.Equal(HttpStatusCode.OK, health.Status);
        Assert.Equal("application/json", health.ContentType);
        Assert.Equal("""{"status":"ok"}""", health.Body);

        await server.DisposeAsync();
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await Assert.ThrowsAnyAsync<SocketException>(async () => await probe.ConnectAsync(IPAddress.Loopback, port));
    }

    [Fact]
    public async Task BusyPort_FailsStartAndLeavesNothingBound()
    {
        using var blocker = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        blocker.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        blocker.Listen();
        var busy = ((IPEndPoint)blocker.LocalEndPoint!).Port;

        var server = new NatsServer(new ServerOptions { Host = "127.0.0.1", Port = 0, HttpPort = busy });
        await Assert.ThrowsAnyAsync<Exception>(() => server.StartAsync());
        Assert.Equal(0, server.Port);
        await server.DisposeAsync();
    }

    [Fact]
    public async Task ConfiguredHost_IsReportedInVarz()
    {
        await using var server = await OurMonitoredServer.StartAsync(o => o.HttpHost = "127.0.0.1");
        var varz = await server.GetJsonAsync("/varz");
        Assert.Equal("127.0.0.1", varz.GetProperty("http_host").GetString());
        Assert.Equal(-1, varz.GetProperty("http_port").GetInt32());
    }

    [Fact]
    public void ClosedRing_KeepsTheNewestInOrder()
    {
        var history = new ConnectionHistory(maxClosed: 3);
        for (ulong cid = 1; cid <= 5; cid++)
        {
            lock (history.SyncRoot)
            {
                history.AddLocked(new ClosedConnection(new ConnInfo { Cid = cid, InMsgs = 1, OutBytes = 10 }, [], null, "$G", Nats.Server.Clients.ClosedReason.ClientClosed));
            }
        }
        Assert.Equal([3UL, 4UL, 5UL], history.Snapshot().Select(c => c.Info.Cid));
        // Totals cover every closed connection, not just the kept ones.
        Assert.Equal(5, history.Closed.InMsgs);
        Assert.Equal(50, history.Closed.OutBytes);
    }

    [Theory]
    [InlineData(0L, "0s")]
    [InlineData(850L, "850ns")]
    [InlineData(591_000L, "591µs")]
    [InlineData(1_234_567L, "1.234567ms")]
    [InlineData(2_500_000_000L, "2.5s")]
    [InlineData(90_000_000_000L, "1m30s")]
    [InlineData(7_200_000_000_000L, "2h0m0s")]
    public void GoDurationStrings(long nanoseconds, string expected) => Assert.Equal(expected, GoFormat.Duration(nanoseconds));

    [Theory]
    [InlineData(0, "0s")]
    [InlineData(59, "59s")]
    [InlineData(61, "1m1s")]
    [InlineData(3_601, "1h0m1s")]
    [InlineData(90_061, "1d1h1m1s")]
    [InlineData(31_536_000 + 86_400, "1y1d0h0m0s")]
    public void GoUptimeStrings(int seconds, string expected) => Assert.Equal(expected, GoFormat.Uptime(TimeSpan.FromSeconds(seconds)));

    [Fact]
    public void GoTimes_TrimTrailingZeros()
    {
        Assert.Equal("2026-11-21T23:57:01.6868861Z", GoFormat.Time(new DateTime(2026, 11, 21, 23, 57, 1, DateTimeKind.Utc).AddTicks(6_868_861)));
        Assert.Equal("2026-11-21T23:57:01.5Z", GoFormat.Time(new DateTime(2026, 11, 21, 23, 57, 1, 500, DateTimeKind.Utc)));
        Assert.Equal("2026-11-21T23:57:01Z", GoFormat.Time(new DateTime(2026, 11, 21, 23, 57, 1, DateTimeKind.Utc)));
    }

    [Fact]
    public void Rtt_SubMillisecondTruncatedToMicroseconds() => Assert.Equal("591µs", GoFormat.Rtt(TimeSpan.FromTicks(5_917)));
}
