using System.Net.Http.Json;
using System.Text.Json;
using Nats.LoadBench.Client;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.LoadBench.Servers;

/// <summary>
/// N servers of one kind joined by routes (each lists every other), for the cluster rows: the same config text
/// for Go and ours, an HTTP monitor on each so the harness can see the routes form and interest cross them.
/// </summary>
internal static class ClusterStart
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    /// <param name="features">With <see cref="Features.JetStream"/> every server gets its own store directory and the servers
    /// form a JetStream cluster (meta group over the routes).</param>
    public static ServerProcess Start(ServerSpec spec, int size, Features features, string? extraConfig, string? jetStreamConfig)
    {
        var routePorts = Enumerable.Range(0, size).Select(_ => FreePorts.Next()).ToArray();
        var monitorPorts = Enumerable.Range(0, size).Select(_ => FreePorts.Next()).ToArray();
        var servers = new List<ServerProcess>();
        try
        {
            for (int i = 0; i < size; i++)
            {
                var routes = string.Join(", ", routePorts.Where((_, j) => j != i).Select(p => $"\"nats-route://127.0.0.1:{p}\""));
                var config = $"server_name: bench{i}\nhttp: \"127.0.0.1:{monitorPorts[i]}\"\n"
                    + $"cluster {{\n  name: bench\n  listen: \"127.0.0.1:{routePorts[i]}\"\n  routes: [{routes}]\n}}\n{extraConfig}";
                servers.Add(ServerProcess.Start(spec, features, config, jetStreamConfig, serverName: null));
            }

            var endpoints = servers.Select((s, i) => s.Endpoint with { MonitorPort = monitorPorts[i] }).ToList();
            foreach (var ep in endpoints)
            {
                WaitForRoutes(ep.MonitorPort, size - 1);
            }

            var primary = servers[0];
            primary.Endpoint = endpoints[0] with { Cluster = endpoints };
            primary.Peers.AddRange(servers.Skip(1));
            return primary;
        }
        catch
        {
            foreach (var s in servers)
            {
                s.Dispose();
            }

            throw;
        }
    }

    /// <summary>Waits until <paramref name="subject"/> is in the route interest of <paramref name="routes"/> routes of the server monitored on <paramref name="monitorPort"/>.</summary>
    public static async Task WaitForInterestAsync(int monitorPort, string subject, int routes)
    {
        var deadline = Environment.TickCount64 + 20_000;
        while (CountRoutesWith(await RoutezAsync(monitorPort), subject) < routes)
        {
            if (Environment.TickCount64 > deadline)
            {
                throw new Kit.RowFailedException($"interest in {subject} did not reach {routes} route(s) within 20 s");
            }

            // The server offers no event for "interest arrived"; this poll is outside the measured time.
            await Task.Delay(20);
        }
    }

    private static void WaitForRoutes(int monitorPort, int expected)
    {
        var deadline = Environment.TickCount64 + 20_000;
        while (true)
        {
            try
            {
                using var doc = RoutezAsync(monitorPort).GetAwaiter().GetResult();
                if (doc.RootElement.GetProperty("num_routes").GetInt32() >= expected)
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
            }

            if (Environment.TickCount64 > deadline)
            {
                throw new SetupException($"the cluster's routes did not form within 20 s (monitor port {monitorPort})");
            }

            // Startup only: routes form in the background and are not announced to anyone outside.
            Thread.Sleep(50);
        }
    }

    private static async Task<JsonDocument> RoutezAsync(int monitorPort) =>
        await Http.GetFromJsonAsync<JsonDocument>($"http://127.0.0.1:{monitorPort}/routez?subs=1") ?? throw new SetupException("empty /routez");

    private static int CountRoutesWith(JsonDocument routez, string subject)
    {
        using (routez)
        {
            return routez.RootElement.GetProperty("routes").EnumerateArray()
                .Count(r => r.TryGetProperty("subscriptions_list", out var list) && list.EnumerateArray().Any(s => s.GetString() == subject));
        }
    }
}
