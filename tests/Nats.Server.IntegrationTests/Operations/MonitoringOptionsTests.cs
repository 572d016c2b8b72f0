using System.Net;
using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>http_base_path (compared with Go), max_closed_clients, and /varz after a reload.</summary>
public sealed class MonitoringOptionsTests
{
    [Fact]
    public async Task Http_base_path_moves_every_endpoint()
    {
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "http: \"127.0.0.1:-1\"\nhttp_base_path: \"mon/\"\n");
            using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
            var lines = new List<string>();
            foreach (var path in new[] { "/mon", "/mon/varz", "/mon/connz", "/mon/subsz", "/mon/healthz", "/varz", "/healthz", "/mon/nothing" })
            {
                using var response = await http.GetAsync($"http://127.0.0.1:{server.MonitorPort}{path}");
                lines.Add($"{path} {(int)response.StatusCode}");
            }
            using var varz = JsonDocument.Parse(await http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/mon/varz"));
            lines.Add("http_base_path " + varz.RootElement.GetProperty("http_base_path").GetString());
            return lines;
        });
        Assert.Equal(
        [
            "/mon 200", "/mon/varz 200", "/mon/connz 200", "/mon/subsz 200", "/mon/healthz 200",
            "/varz 404", "/healthz 404", "/mon/nothing 404", "http_base_path mon/",
        ], results);
    }

    [Fact]
    public async Task Max_closed_clients_bounds_the_closed_connection_list()
    {
        await using var server = new NatsServer(new ServerOptions { Host = "127.0.0.1", Port = 0, HttpPort = -1, MaxClosedClients = 2 });
        await server.StartAsync();
        for (var i = 0; i < 4; i++)
        {
            var session = await Session.OpenAsync(server.Port, $"{{\"verbose\":false,\"name\":\"c{i}\"}}");
            await session.DisposeAsync();
            // Each close is recorded before the next connection, so the ring's order is known.
            await WaitAsync(() => server.History.Snapshot().Count(c => c.Info.Name == $"c{i}") == 1);
        }
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        using var connz = JsonDocument.Parse(await http.GetStringAsync($"http://127.0.0.1:{server.MonitoringPort}/connz?state=closed"));
        var names = connz.RootElement.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString()).ToList();
        Assert.Equal(["c2", "c3"], names);
    }

    [Fact]
    public async Task Varz_shows_reloaded_limits_and_config_load_time()
    {
        await using var server = await OpsServer.StartAsync("ours", "http: \"127.0.0.1:-1\"\nmax_payload: 1000\n");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        var url = $"http://127.0.0.1:{server.MonitorPort}/varz";
        using var before = JsonDocument.Parse(await http.GetStringAsync(url));
        Assert.Null(await server.ReloadAsync("http: \"127.0.0.1:-1\"\nmax_payload: 2000\n"));
        using var after = JsonDocument.Parse(await http.GetStringAsync(url));
        Assert.Equal(1000, before.RootElement.GetProperty("max_payload").GetInt32());
        Assert.Equal(2000, after.RootElement.GetProperty("max_payload").GetInt32());
        Assert.True(after.RootElement.GetProperty("config_load_time").GetDateTime() > before.RootElement.GetProperty("config_load_time").GetDateTime());
        Assert.Equal(before.RootElement.GetProperty("start").GetDateTime(), after.RootElement.GetProperty("start").GetDateTime());
    }

    [Fact]
    public async Task Reload_without_a_file_is_refused_with_gos_text()
    {
        await using var server = new NatsServer(new ServerOptions { Host = "127.0.0.1", Port = 0 });
        await server.StartAsync();
        var error = await Assert.ThrowsAsync<ReloadException>(server.ReloadAsync);
        Assert.Equal("can only reload config when a file is provided using -c or --config", error.Message);
    }

    private static async Task WaitAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "condition not reached");
            await Task.Delay(10);
        }
    }
}
