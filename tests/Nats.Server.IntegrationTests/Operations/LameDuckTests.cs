using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// Lame duck mode against Go (SIGUSR2 to its pid) and ours (EnterLameDuckModeAsync). Go's shortest
/// lame_duck_duration in a file is 30 s; with a 1 s grace period and two clients the closes are at
/// most a second apart, so a run takes about two seconds.
/// </summary>
public sealed class LameDuckTests
{
    private const string ShortLameDuck = "lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"\n";

    [Fact]
    public async Task Protocol1_client_gets_ldm_info_then_all_are_closed_and_the_server_exits()
    {
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            var transcript = new List<string>();
            await using var server = await OpsServer.StartAsync(kind, ShortLameDuck);
            // Only a client that declared protocol 1 and had its first PONG takes async INFO.
            await using var modern = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}");
            await using var legacy = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":0}");
            server.StartLameDuckMode();
            var modernLines = modern.ReadUntilClosedAsync(TimeSpan.FromSeconds(60));
            var legacyLines = legacy.ReadUntilClosedAsync(TimeSpan.FromSeconds(60));
            transcript.AddRange((await modernLines).Select(l => "protocol 1: " + Describe(l)));
            transcript.AddRange((await legacyLines).Select(l => "protocol 0: " + Describe(l)));
            transcript.Add("new connection: " + await TryConnectAsync(server.Port));
            await server.WaitForExitAsync(TimeSpan.FromSeconds(60));
            transcript.Add("exited");
            await server.Log.WaitForAsync("Entering lame duck mode, stop accepting new clients");
            await server.Log.WaitForAsync("Closing existing clients");
            return transcript;
        });
        Assert.Equal(
        [
            "protocol 1: INFO ldm=true",
            "protocol 1: [closed]",
            "protocol 0: [closed]",
            "new connection: refused",
            "exited",
        ], results);
    }

    [Fact]
    public async Task Without_clients_lame_duck_shuts_down_at_once()
    {
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"20s\"\n");
            server.StartLameDuckMode();
            // Well inside the 20 s grace period: no clients means no waiting.
            await server.WaitForExitAsync(TimeSpan.FromSeconds(15));
            return ["exited"];
        });
        Assert.Equal(["exited"], results);
    }

    [Fact]
    public async Task Healthz_fails_and_monitoring_keeps_serving_during_the_grace_period()
    {
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind,
                "http: \"127.0.0.1:-1\"\nlame_duck_duration: \"60s\"\nlame_duck_grace_period: \"50s\"\n");
            using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
            var url = $"http://127.0.0.1:{server.MonitorPort}";
            await using var client = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}");
            server.StartLameDuckMode();
            // The ldm INFO goes out after the listener is closed: from then on the state is observable.
            await client.ReadUntilAsync("\"ldm\":true");
            using var health = await http.GetAsync(url + "/healthz");
            using var varz = await http.GetAsync(url + "/varz");
            return
            [
                $"healthz {(int)health.StatusCode} {await health.Content.ReadAsStringAsync()}",
                $"varz {(int)varz.StatusCode}",
            ];
        });
        Assert.Equal(
        [
            "healthz 503 {\"status\":\"error\",\"error\":\"failed to be ready for connections after 1ms: server\"}",
            "varz 200",
        ], results);
    }

    [Fact]
    public async Task In_process_short_durations_close_every_client()
    {
        // Options set directly may go below Go's 30 s file minimum, as Go's own tests do.
        var options = new ServerOptions
        {
            Host = "127.0.0.1",
            Port = 0,
            LameDuckDuration = TimeSpan.FromMilliseconds(600),
            LameDuckGracePeriod = TimeSpan.FromMilliseconds(100),
        };
        await using var server = new NatsServer(options);
        await server.StartAsync();
        var sessions = new List<Session>();
        for (var i = 0; i < 5; i++)
        {
            sessions.Add(await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}"));
        }
        var ldm = server.EnterLameDuckModeAsync();
        Assert.True(server.IsLameDuckMode);
        foreach (var session in sessions)
        {
            var lines = await session.ReadUntilClosedAsync();
            Assert.Equal(["INFO ldm=true", "[closed]"], lines.Select(Describe));
            await session.DisposeAsync();
        }
        await ldm.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(server.Stopped.IsCompleted);
    }

    [Theory]
    [InlineData(2_000 * TimeSpan.TicksPerMillisecond, 10, 200 * TimeSpan.TicksPerMillisecond, 1)]
    [InlineData(20_000 * TimeSpan.TicksPerMillisecond, 10, TimeSpan.TicksPerSecond, 1)]
    [InlineData(5, 100, 1, 20)]
    public void Close_pacing_follows_go(long spreadTicks, int clients, long intervalTicks, int batch)
    {
        // Go: spread / clients, at most 1 s; below the clock's resolution, batches of clients / spread.
        Assert.Equal((TimeSpan.FromTicks(intervalTicks), batch), NatsServer.ClosePacing(TimeSpan.FromTicks(spreadTicks), clients));
    }

    private static string Describe(string line)
    {
        if (!line.StartsWith("INFO ", StringComparison.Ordinal))
        {
            return line;
        }
        using var doc = JsonDocument.Parse(line["INFO ".Length..]);
        return doc.RootElement.TryGetProperty("ldm", out var ldm) ? $"INFO ldm={ldm.GetBoolean().ToString().ToLowerInvariant()}" : "INFO";
    }

    private static async Task<string> TryConnectAsync(int port)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port));
            return "accepted";
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused)
        {
            return "refused";
        }
    }
}
