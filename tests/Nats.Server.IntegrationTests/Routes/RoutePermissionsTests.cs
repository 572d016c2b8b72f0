using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Cluster <c>permissions { import, export }</c> as Go 2.9.10 applies them to routes: the server under test (Go's or
/// ours) announces only the interest it may import and keeps only the peer interest it may export (a wildcard wider
/// than an export deny is kept, the denied subjects filtered out of what it sends); its route INFO carries both lists;
/// a reload resends and withdraws interest. The peer is Go; what each side saw is compared with Go's run.
/// </summary>
public sealed class RoutePermissionsTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);
    private static readonly HttpClient Http = new();

    private const string Permissions = "  permissions { import: { allow: [\"imp.>\"] }, export: { allow: [\"exp.>\"], deny: [\"exp.secret\"] } }";
    private const string Reloaded = "  permissions { import: { allow: [\"other.>\"] }, export: { allow: [\"exp.a\"] } }";

    private static string Config(int clusterPort, string routes = "", string clusterExtra = "", string? name = null) =>
        $"listen: \"127.0.0.1:-1\"\nhttp: \"127.0.0.1:-1\"\nserver_name: {name ?? "s" + clusterPort}\ncluster {{\n  name: C\n  listen: \"127.0.0.1:{clusterPort}\"\n  routes: [{routes}]\n{clusterExtra}\n}}\n";

    [Fact]
    public async Task Route_permissions_shape_interest_and_messages_as_go()
    {
        var go = await RunAsync("go");
        var ours = await RunAsync("ours");
        Assert.Equal(
        [
            "peer sees: imp.a",
            "server keeps: exp.>, exp.a",
            "peer got: MSG exp.a, MSG exp.a",
            "server got: MSG imp.a",
            // Go's encoding/json escapes '>'.
            "info import: {\"allow\":[\"imp.\\u003e\"]}",
            "info export: {\"allow\":[\"exp.\\u003e\"],\"deny\":[\"exp.secret\"]}",
            "after reload peer sees: other.a",
            "after reload server keeps: exp.a",
            "after reload peer got: MSG exp.a, MSG exp.a",
        ], go);
        Assert.Equal(go, ours);
    }

    private static async Task<List<string>> RunAsync(string kind)
    {
        var (portX, portY) = (FreePorts.Next(), FreePorts.Next());
        await using var server = await OpsServer.StartAsync(kind, Config(portX, clusterExtra: Permissions, name: "x"));
        await using var peer = await OpsServer.StartAsync("go", Config(portY, $"\"nats-route://127.0.0.1:{portX}\"", name: "y"));
        var transcript = new List<string>();

        await using var onServer = await Session.OpenAsync(server.Port);
        await using var onPeer = await Session.OpenAsync(peer.Port);
        await WaitForRouteAsync(server);
        await WaitForRouteAsync(peer);

        // In this order on one route: when the last one arrives, the refused ones would have arrived before it.
        await onServer.ExchangeAsync("SUB other.a 1\r\nSUB imp.a 2\r\n");
        await onPeer.ExchangeAsync("SUB exp.secret 1\r\nSUB other.b 2\r\nSUB exp.a 3\r\nSUB exp.> 4\r\n");
        transcript.Add("peer sees: " + string.Join(", ", await RouteSubsAsync(peer, last: "imp.a")));
        transcript.Add("server keeps: " + string.Join(", ", await RouteSubsAsync(server, last: "exp.>")));

        // exp.secret goes first: had it been sent, it would be read before the exp.a messages.
        await onServer.ExchangeAsync("PUB exp.secret 1\r\nx\r\nPUB exp.a 1\r\nx\r\n");
        transcript.Add("peer got: " + string.Join(", ", await MessagesAsync(onPeer, 2)));
        await onPeer.ExchangeAsync("PUB other.a 1\r\nx\r\nPUB imp.a 1\r\nx\r\n");
        transcript.Add("server got: " + string.Join(", ", await MessagesAsync(onServer, 1)));

        var info = await RouteInfoAsync(portX);
        transcript.Add("info import: " + info.GetProperty("import").GetRawText());
        transcript.Add("info export: " + info.GetProperty("export").GetRawText());

        Assert.Null(await server.ReloadAsync(Config(portX, clusterExtra: Reloaded, name: "x")));
        transcript.Add("after reload peer sees: " + string.Join(", ", await RouteSubsAsync(peer, last: "other.a", gone: "imp.a")));
        transcript.Add("after reload server keeps: " + string.Join(", ", await RouteSubsAsync(server, last: "exp.a", gone: "exp.>")));
        await onServer.ExchangeAsync("PUB exp.b 1\r\nx\r\nPUB exp.a 1\r\nx\r\n");
        transcript.Add("after reload peer got: " + string.Join(", ", await MessagesAsync(onPeer, 2)));
        return transcript;
    }

    /// <summary>The next <paramref name="count"/> one-byte messages, as "MSG subject" (sids left out: their order is the peer's).</summary>
    private static async Task<IEnumerable<string>> MessagesAsync(Session session, int count)
    {
        var messages = new List<string>();
        while (messages.Count < count)
        {
            var text = await session.ReadUntilAsync("\r\nx\r\n");
            messages.AddRange(Session.Lines(text).Where(l => l.StartsWith("MSG ", StringComparison.Ordinal)).Select(l => string.Join(' ', l.Split(' ')[..2])));
        }
        return messages;
    }

    /// <summary>The peer interest a server holds on its one route, once <paramref name="last"/> is there and <paramref name="gone"/> is not.</summary>
    private static async Task<List<string>> RouteSubsAsync(OpsServer server, string last, string? gone = null)
    {
        using var cts = new CancellationTokenSource(Deadline);
        while (true)
        {
            using var routez = JsonDocument.Parse(await Http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/routez?subs=1", cts.Token));
            var routes = routez.RootElement.GetProperty("routes");
            if (routes.GetArrayLength() == 1 && routes[0].TryGetProperty("subscriptions_list", out var list))
            {
                var subs = list.EnumerateArray().Select(e => e.GetString()!).Order(StringComparer.Ordinal).ToList();
                if (subs.Contains(last) && (gone is null || !subs.Contains(gone)))
                {
                    return subs;
                }
            }
            await Task.Delay(50, cts.Token);
        }
    }

    private static async Task WaitForRouteAsync(OpsServer server)
    {
        using var cts = new CancellationTokenSource(Deadline);
        while (true)
        {
            using var routez = JsonDocument.Parse(await Http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/routez", cts.Token));
            if (routez.RootElement.GetProperty("num_routes").GetInt32() == 1)
            {
                return;
            }
            await Task.Delay(50, cts.Token);
        }
    }

    /// <summary>The INFO the server greets a route connection with.</summary>
    private static async Task<JsonElement> RouteInfoAsync(int routePort)
    {
        await using var raw = await Core.RawClient.ConnectAsync(routePort);
        var line = await raw.ReadUntilAsync("\r\n");
        using var doc = JsonDocument.Parse(line["INFO ".Length..].Trim());
        return doc.RootElement.Clone();
    }
}
