using System.Text.Json;
using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>
/// The same traffic on any server: alice subscribes (plain, queue, auto-unsubscribe), bob publishes
/// three messages (one nobody wants), carl subscribes, publishes and disconnects. Every step is
/// synced with PING/PONG, so the server has handled it before anything is read.
/// </summary>
internal sealed class MonitoringScenario : IAsyncDisposable
{
    private readonly List<RawClient> _open = [];

    public static async Task<MonitoringScenario> RunAsync(MonitoredServer server)
    {
        var scenario = new MonitoringScenario();
        var alice = await scenario.ConnectAsync(server, """{"verbose":false,"pedantic":false,"name":"alice","lang":"python","version":"1.2.3"}""");
        var bob = await scenario.ConnectAsync(server, """{"verbose":false,"pedantic":false,"name":"bob"}""");
        await alice.SendAsync("SUB foo 1\r\nSUB bar.* q1 2\r\nSUB baz 3\r\nUNSUB 3 5\r\n");
        await alice.SyncAsync();
        await bob.SendAsync("PUB foo 5\r\nhello\r\nPUB bar.x 3\r\nabc\r\nPUB none 2\r\nhi\r\n");
        await bob.SyncAsync();
        await alice.ReadUntilAsync("abc\r\n");

        await using (var carl = await RawClient.ConnectAsync(server.ClientPort))
        {
            await carl.ConnectAndReadInfoAsync("""{"verbose":false,"pedantic":false,"name":"carl"}""");
            await carl.SendAsync("SUB x 1\r\nPUB foo 1\r\nz\r\n");
            await carl.SyncAsync();
        }
        await alice.ReadUntilAsync("z\r\n");
        await server.WaitForJsonAsync("/connz?state=closed", json => json.GetProperty("total").GetInt32() == 1);
        return scenario;
    }

    private async Task<RawClient> ConnectAsync(MonitoredServer server, string connect)
    {
        var client = await RawClient.ConnectAsync(server.ClientPort);
        _open.Add(client);
        await client.ConnectAndReadInfoAsync(connect);
        await client.SyncAsync();
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var client in _open)
        {
            await client.DisposeAsync();
        }
    }

    /// <summary>Connections keyed by client name, for comparing servers whose cids differ (Go's start at 4: 1-3 are internal).</summary>
    public static Dictionary<string, JsonElement> ByName(JsonElement connz) =>
        connz.GetProperty("connections").EnumerateArray().ToDictionary(c => c.GetProperty("name").GetString()!);
}
