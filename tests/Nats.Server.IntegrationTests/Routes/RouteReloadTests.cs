using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Reloading the cluster settings (Go's clusterOption and routesOption): routes added and removed by a reload, accepted
/// routes closed when the cluster's credentials change, and the changes Go refuses (cluster host/port, the gateway and
/// leaf node blocks), each run with the reloaded server Go's and ours against a Go peer, and compared.
/// </summary>
public sealed class RouteReloadTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);
    private static readonly HttpClient Http = new();

    public static TheoryData<string> Kinds => new() { "go", "ours" };

    private static string Config(int clusterPort, string routes = "", string clusterExtra = "", string extra = "", string? name = null) =>
        $"http: \"127.0.0.1:-1\"\nserver_name: {name ?? "s" + clusterPort}\n{extra}\ncluster {{\n  name: C\n  listen: \"127.0.0.1:{clusterPort}\"\n  routes: [{routes}]\n{clusterExtra}\n}}\n";

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_reload_adds_and_removes_routes(string kind)
    {
        var (portA, portB) = (FreePorts.Next(), FreePorts.Next());
        await using var peer = await OpsServer.StartAsync("go", Config(portB));
        await using var server = await OpsServer.StartAsync(kind, Config(portA));
        Assert.Equal(0, await RoutesAsync(server));

        var route = $"\"nats-route://127.0.0.1:{portB}\"";
        Assert.Null(await server.ReloadAsync(Config(portA, route)));
        await WaitForRoutesAsync(server, peer, 1);
        await server.Log.WaitForAsync("Reloaded: cluster routes");

        var from = server.Log.Count;
        Assert.Null(await server.ReloadAsync(Config(portA)));
        await WaitForRoutesAsync(server, peer, 0);
        await server.Log.WaitForAsync($"Removed route nats-route://127.0.0.1:{portB}", from);

        // Added again: dialled again (a removed URL's dialling stopped for good, a new entry starts afresh).
        Assert.Null(await server.ReloadAsync(Config(portA, route)));
        await WaitForRoutesAsync(server, peer, 1);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task New_cluster_credentials_close_accepted_routes_that_used_the_old_ones(string kind)
    {
        var (portA, portB) = (FreePorts.Next(), FreePorts.Next());
        const string auth = "  authorization { user: ru, password: p1 }";
        await using var server = await OpsServer.StartAsync(kind, Config(portA, clusterExtra: auth));
        await using var peer = await OpsServer.StartAsync("go", Config(portB, $"\"nats-route://ru:p1@127.0.0.1:{portA}\""));
        await WaitForRoutesAsync(server, peer, 1);

        var from = server.Log.Count;
        Assert.Null(await server.ReloadAsync(Config(portA, clusterExtra: auth.Replace("p1", "p2", StringComparison.Ordinal))));
        await server.Log.WaitForAsync("Reloaded: cluster", from);
        // The peer keeps dialling with the old password and is refused each time.
        await WaitForRoutesAsync(server, peer, 0);
    }

    [Fact]
    public async Task Refused_cluster_gateway_and_leaf_changes_match_go()
    {
        var results = new Dictionary<string, List<string>>();
        foreach (var kind in new[] { "go", "ours" })
        {
            var (portA, portB) = (FreePorts.Next(), FreePorts.Next());
            var gateway = $"gateway {{ name: C, listen: \"127.0.0.1:{FreePorts.Next()}\" }}";
            var leaf = $"leafnodes {{ listen: \"127.0.0.1:{FreePorts.Next()}\" }}";
            // Go wants a configured system account when both blocks are there.
            var system = "accounts { SYS: {} }\nsystem_account: SYS";
            var baseline = Config(portA, extra: gateway + "\n" + leaf + "\n" + system, name: "a");
            await using var server = await OpsServer.StartAsync(kind, baseline);
            var transcript = new List<string>
            {
                Normalize(await server.ReloadAsync(Config(portB, extra: gateway + "\n" + leaf + "\n" + system, name: "a")), portA, portB),
                Normalize(await server.ReloadAsync(baseline.Replace("name: C, listen", "name: C, connect_retries: 3, listen", StringComparison.Ordinal)), portA, portB),
                Normalize(await server.ReloadAsync(baseline.Replace("leafnodes {", "leafnodes { reconnect: 7, ", StringComparison.Ordinal)), portA, portB),
                Normalize(await server.ReloadAsync(baseline), portA, portB),
            };
            results[kind] = transcript;
        }
        Assert.Equal(
        [
            "config reload not supported for cluster port: old=A, new=B",
            "config reload not supported for Gateway",
            "config reload not supported for LeafNode",
            "ok",
        ], results["go"]);
        Assert.Equal(results["go"], results["ours"]);
    }

    /// <summary>The refusal up to its old/new values (Go prints its structs with %v, pointers included).</summary>
    private static string Normalize(string? error, int portA, int portB)
    {
        if (error is null)
        {
            return "ok";
        }
        var text = error.Replace(portA.ToString(System.Globalization.CultureInfo.InvariantCulture), "A", StringComparison.Ordinal)
            .Replace(portB.ToString(System.Globalization.CultureInfo.InvariantCulture), "B", StringComparison.Ordinal);
        return text.StartsWith("config reload not supported for cluster", StringComparison.Ordinal) ? text : text.Split(':')[0];
    }

    private static async Task WaitForRoutesAsync(OpsServer a, OpsServer b, int count)
    {
        using var cts = new CancellationTokenSource(Deadline);
        while (await RoutesAsync(a) != count || await RoutesAsync(b) != count)
        {
            await Task.Delay(50, cts.Token);
        }
    }

    private static async Task<int> RoutesAsync(OpsServer server)
    {
        using var routez = JsonDocument.Parse(await Http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/routez"));
        return routez.RootElement.GetProperty("num_routes").GetInt32();
    }
}
