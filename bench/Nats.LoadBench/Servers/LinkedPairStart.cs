using System.Net.Http.Json;
using System.Text.Json;
using Nats.LoadBench.Client;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.LoadBench.Servers;

/// <summary>
/// Two servers of one kind joined by a gateway or a leaf connection (the gateway and leaf rows): the same config
/// text for Go and ours, an HTTP monitor on each so the harness can see the link form before a run starts.
/// </summary>
internal static class LinkedPairStart
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    public static ServerProcess Start(ServerSpec spec, ClusterLink link, Features features, string? extraConfig)
    {
        try
        {
            return StartOnce(spec, link, features, extraConfig);
        }
        catch (SetupException ex) when (ex.Message.Contains("in use", StringComparison.OrdinalIgnoreCase))
        {
            // A port FreePorts handed out was taken before the server bound it (another process on the machine picked
            // the same one): once more on fresh ports.
            return StartOnce(spec, link, features, extraConfig);
        }
    }

    private static ServerProcess StartOnce(ServerSpec spec, ClusterLink link, Features features, string? extraConfig)
    {
        int[] linkPorts = [FreePorts.Next(), FreePorts.Next()];
        int[] monitorPorts = [FreePorts.Next(), FreePorts.Next()];
        var servers = new ServerProcess?[2];
        try
        {
            // The listening side first (the hub; for gateways either): a leaf that dials a hub not yet up holds
            // ephemeral ports meanwhile, one of which may be the port the hub is about to bind.
            int[] order = link == ClusterLink.LeafThenHub ? [1, 0] : [0, 1];
            foreach (int i in order)
            {
                var config = $"server_name: bench{i}\nhttp: \"127.0.0.1:{monitorPorts[i]}\"\n{LinkBlock(link, i, linkPorts)}\n{extraConfig}";
                servers[i] = ServerProcess.Start(spec, features, config, jetStreamConfig: null, serverName: null);
            }

            for (int i = 0; i < 2; i++)
            {
                WaitForLink(link, monitorPorts[i]);
            }

            var endpoints = servers.Select((s, i) => s!.Endpoint with { MonitorPort = monitorPorts[i] }).ToList();
            var primary = servers[0]!;
            primary.Endpoint = endpoints[0] with { Cluster = endpoints };
            primary.Peers.Add(servers[1]!);
            return primary;
        }
        catch
        {
            foreach (var s in servers)
            {
                s?.Dispose();
            }

            throw;
        }
    }

    private static string LinkBlock(ClusterLink link, int index, int[] ports)
    {
        int other = 1 - index;
        bool hub = (link == ClusterLink.HubThenLeaf) == (index == 0);
        return link switch
        {
            ClusterLink.Gateway => $"gateway {{\n  name: {GatewayName(index)}\n  listen: \"127.0.0.1:{ports[index]}\"\n"
                + $"  gateways: [ {{ name: {GatewayName(other)}, url: \"nats://127.0.0.1:{ports[other]}\" }} ]\n}}",
            ClusterLink.HubThenLeaf or ClusterLink.LeafThenHub => hub
                ? $"leafnodes {{\n  listen: \"127.0.0.1:{ports[index]}\"\n}}"
                : $"leafnodes {{\n  remotes: [ {{ url: \"nats-leaf://127.0.0.1:{ports[other]}\" }} ]\n}}",
            _ => throw new ArgumentOutOfRangeException(nameof(link), link, "routes are ClusterStart's"),
        };
    }

    private static string GatewayName(int index) => index == 0 ? "A" : "B";

    /// <summary>Gateways: the outbound and the inbound connection to the other cluster; leafs: one leaf connection.</summary>
    private static void WaitForLink(ClusterLink link, int monitorPort)
    {
        var deadline = Environment.TickCount64 + 20_000;
        while (true)
        {
            try
            {
                if (link == ClusterLink.Gateway ? GatewaysUp(monitorPort) : LeafUp(monitorPort))
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
            }

            if (Environment.TickCount64 > deadline)
            {
                throw new SetupException($"the {link} link did not form within 20 s (monitor port {monitorPort})");
            }

            // Startup only: the link forms in the background (Go dials a gateway 1 s after start) and is announced to no one outside.
            Thread.Sleep(50);
        }
    }

    private static bool GatewaysUp(int monitorPort)
    {
        using var doc = Get(monitorPort, "/gatewayz");
        var root = doc.RootElement;
        return root.TryGetProperty("outbound_gateways", out var outbound) && outbound.EnumerateObject().Any()
            && root.TryGetProperty("inbound_gateways", out var inbound) && inbound.EnumerateObject().Any();
    }

    private static bool LeafUp(int monitorPort)
    {
        using var doc = Get(monitorPort, "/leafz");
        return doc.RootElement.GetProperty("leafnodes").GetInt32() >= 1;
    }

    private static JsonDocument Get(int monitorPort, string path) =>
        Http.GetFromJsonAsync<JsonDocument>($"http://127.0.0.1:{monitorPort}{path}").GetAwaiter().GetResult() ?? throw new SetupException($"empty {path}");
}
