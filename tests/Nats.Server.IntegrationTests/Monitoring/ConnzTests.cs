using System.Net;
using System.Text;
using System.Text.Json;
using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>/connz paging, sorting, state filters, cid lookup and subscription lists on our server.</summary>
public sealed class ConnzTests
{
    [Fact]
    public async Task Paging_OffsetAndLimitSliceTheCidOrder()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        var clients = await ConnectManyAsync(server, 5);
        try
        {
            var page = await server.GetJsonAsync("/connz?offset=1&limit=2");
            Assert.Equal(5, page.GetProperty("total").GetInt32());
            Assert.Equal(2, page.GetProperty("num_connections").GetInt32());
            Assert.Equal(1, page.GetProperty("offset").GetInt32());
            Assert.Equal(2, page.GetProperty("limit").GetInt32());
            Assert.Equal(["c1", "c2"], Names(page));

            var beyond = await server.GetJsonAsync("/connz?offset=10");
            Assert.Equal(0, beyond.GetProperty("num_connections").GetInt32());
            Assert.Equal(5, beyond.GetProperty("total").GetInt32());

            var defaults = await server.GetJsonAsync("/connz?limit=-3&offset=-1");
            Assert.Equal(1024, defaults.GetProperty("limit").GetInt32());
            Assert.Equal(0, defaults.GetProperty("offset").GetInt32());
            Assert.Equal(["c0", "c1", "c2", "c3", "c4"], Names(defaults));
        }
        finally
        {
            await DisposeAllAsync(clients);
        }
    }

    [Fact]
    public async Task Sorting_ByTrafficAndSubscriptionsIsDescending()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        var clients = await ConnectManyAsync(server, 3);
        try
        {
            // In: c0 3 msgs/11 bytes, c1 4/4, c2 2/6. Out: c1 gets 2 msgs/10 bytes. Subs: c2 3, c1 1, c0 0.
            await clients[1].SendAsync("SUB in.* 1\r\nPUB a 1\r\nx\r\nPUB a 1\r\nx\r\nPUB a 1\r\nx\r\nPUB a 1\r\nx\r\n");
            await clients[1].SyncAsync();
            await clients[2].SendAsync("SUB s1 1\r\nSUB s2 2\r\nSUB s3 3\r\nPUB a 3\r\nxyz\r\nPUB a 3\r\nxyz\r\n");
            await clients[2].SyncAsync();
            await clients[0].SendAsync("PUB a 1\r\nx\r\nPUB in.one 5\r\nhello\r\nPUB in.two 5\r\nhello\r\n");
            await clients[0].SyncAsync();

            Assert.Equal(["c1", "c0", "c2"], Names(await server.GetJsonAsync("/connz?sort=msgs_from")));
            Assert.Equal(["c0", "c2", "c1"], Names(await server.GetJsonAsync("/connz?sort=bytes_from")));
            Assert.Equal(["c1", "c0", "c2"], Names(await server.GetJsonAsync("/connz?sort=msgs_to")));
            Assert.Equal(["c1", "c0", "c2"], Names(await server.GetJsonAsync("/connz?sort=bytes_to")));
            Assert.Equal(["c2", "c1", "c0"], Names(await server.GetJsonAsync("/connz?sort=subs")));
            Assert.Equal(["c0", "c1", "c2"], Names(await server.GetJsonAsync("/connz?sort=cid")));
            Assert.Equal(["c0", "c1", "c2"], Names(await server.GetJsonAsync("/connz?sort=start")));
            // Go sorts uptime ascending: the newest connection first.
            Assert.Equal(["c2", "c1", "c0"], Names(await server.GetJsonAsync("/connz?sort=uptime")));
            foreach (var sort in new[] { "pending", "last", "idle" })
            {
                Assert.Equal(3, (await server.GetJsonAsync($"/connz?sort={sort}")).GetProperty("num_connections").GetInt32());
            }

            var received = (await server.GetJsonAsync("/connz?sort=msgs_to&limit=1")).GetProperty("connections")[0];
            Assert.Equal(2, received.GetProperty("out_msgs").GetInt64());
            Assert.Equal(10, received.GetProperty("out_bytes").GetInt64());
        }
        finally
        {
            await DisposeAllAsync(clients);
        }
    }

    [Fact]
    public async Task ClosedConnections_KeepReasonStopAndSubscriptions()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        var clients = await ConnectManyAsync(server, 2);
        try
        {
            await clients[0].SendAsync("SUB keep.me 7\r\nSUB other q 8\r\n");
            await clients[0].SyncAsync();
            await clients[0].DisposeAsync();
            // The stop order is asserted below: the first close must be recorded before the second happens.
            await server.WaitForJsonAsync("/connz?state=closed", j => j.GetProperty("total").GetInt32() == 1);
            // An unknown protocol line closes the second one; Go 2.9.10 reports it as a protocol violation.
            await clients[1].SendAsync("BOGUS\r\n");
            await clients[1].ReadToEndAsync();

            var closed = await server.WaitForJsonAsync("/connz?state=closed&subs=detail", j => j.GetProperty("total").GetInt32() == 2);
            var byName = MonitoringScenario.ByName(closed);
            Assert.Equal("Client Closed", byName["c0"].GetProperty("reason").GetString());
            Assert.Equal("Protocol Violation", byName["c1"].GetProperty("reason").GetString());
            Assert.True(byName["c0"].TryGetProperty("stop", out _));
            Assert.Equal(2, byName["c0"].GetProperty("subscriptions").GetInt32());
            var details = byName["c0"].GetProperty("subscriptions_list_detail").EnumerateArray()
                .Select(d => $"{d.GetProperty("account").GetString()} {d.GetProperty("subject").GetString()} {(d.TryGetProperty("qgroup", out var q) ? q.GetString() : "-")} {d.GetProperty("sid").GetString()}")
                .Order().ToList();
            Assert.Equal(["$G keep.me - 7", "$G other q 8"], details);

            Assert.Equal(["c1", "c0"], Names(await server.GetJsonAsync("/connz?state=closed&sort=stop")));
            Assert.Equal(["c0", "c1"], Names(await server.GetJsonAsync("/connz?state=closed&sort=reason")));
            var open = await server.GetJsonAsync("/connz");
            Assert.Equal(0, open.GetProperty("total").GetInt32());
            Assert.Equal(0, open.GetProperty("connections").GetArrayLength());

            // A closed connection's subscription list without details is just subjects (cid 1 is the system account's internal client).
            var list = (await server.GetJsonAsync("/connz?state=closed&subs=1&cid=2")).GetProperty("connections")[0];
            Assert.Equal(["keep.me", "other"], list.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()).Order());
            Assert.False(list.TryGetProperty("subscriptions_list_detail", out _));
        }
        finally
        {
            await DisposeAllAsync(clients);
        }
    }

    [Fact]
    public async Task StateAny_MixesOpenAndClosed_CidFindsOne()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        var clients = await ConnectManyAsync(server, 3);
        try
        {
            await clients[1].DisposeAsync();
            await server.WaitForJsonAsync("/connz?state=closed", j => j.GetProperty("total").GetInt32() == 1);

            var any = await server.GetJsonAsync("/connz?state=any");
            Assert.Equal(3, any.GetProperty("total").GetInt32());
            Assert.Equal(["c0", "c1", "c2"], Names(any));
            Assert.Equal(["c1"], Names(await server.GetJsonAsync("/connz?state=all&sort=cid&offset=1&limit=1")));

            // Client ids start at 2: the system account's internal client has cid 1.
            var one = await server.GetJsonAsync("/connz?cid=4");
            Assert.Equal(["c2"], Names(one));
            Assert.Equal(1, one.GetProperty("limit").GetInt32());
            Assert.Equal(2, one.GetProperty("total").GetInt32());
            Assert.Equal(0, (await server.GetJsonAsync("/connz?cid=99")).GetProperty("num_connections").GetInt32());
            Assert.Equal(["c1"], Names(await server.GetJsonAsync("/connz?cid=3&state=closed")));
        }
        finally
        {
            await DisposeAllAsync(clients);
        }
    }

    [Fact]
    public async Task SlowConsumer_ShowsInClosedConnectionsVarzAndAccountStats()
    {
        await using var server = await OurMonitoredServer.StartAsync(o =>
        {
            // Go refuses max_payload above max_pending at startup; the embedding API checks the same.
            o.MaxPending = 64 * 1024;
            o.MaxPayload = 64 * 1024;
        });
        await using var stuck = await RawClient.ConnectAsync(server.ClientPort, receiveBufferSize: 4096);
        await stuck.ConnectAndReadInfoAsync("""{"verbose":false,"name":"stuck"}""");
        await stuck.SendAsync("SUB data 1\r\n");
        await stuck.SyncAsync();
        await using var publisher = await RawClient.ConnectAsync(server.ClientPort);
        await publisher.ConnectAndReadInfoAsync();

        var frame = Encoding.ASCII.GetBytes($"PUB data 4096\r\n{new string('x', 4096)}\r\n");
        var batch = new byte[frame.Length * 64];
        for (var i = 0; i < 64; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }
        // Publish until the server gives up on the reader that never reads.
        for (var i = 0; i < 1000 && server.Server.SlowConsumers == 0; i++)
        {
            await publisher.SendAsync(batch);
            await publisher.SyncAsync();
        }

        var closed = await server.WaitForJsonAsync("/connz?state=closed", j => j.GetProperty("total").GetInt32() == 1);
        Assert.Equal("Slow Consumer (Pending Bytes)", closed.GetProperty("connections")[0].GetProperty("reason").GetString());
        Assert.Equal(1, (await server.GetJsonAsync("/varz")).GetProperty("slow_consumers").GetInt64());
        var stat = (await server.GetJsonAsync("/accstatz")).GetProperty("account_statz")[0];
        Assert.Equal(1, stat.GetProperty("slow_consumers").GetInt64());
    }

    [Fact]
    public async Task ServerTotals_IncludeClosedConnections()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        await using (var gone = await RawClient.ConnectAsync(server.ClientPort))
        {
            await gone.ConnectAndReadInfoAsync();
            await gone.SendAsync("SUB t 1\r\nPUB t 3\r\nabc\r\nPUB t 3\r\nabc\r\n");
            await gone.SyncAsync();
        }
        await server.WaitForJsonAsync("/connz?state=closed", j => j.GetProperty("total").GetInt32() == 1);
        await using var stays = await RawClient.ConnectAsync(server.ClientPort);
        await stays.ConnectAndReadInfoAsync();
        await stays.SendAsync("PUB t 1\r\nz\r\n");
        await stays.SyncAsync();

        var varz = await server.GetJsonAsync("/varz");
        Assert.Equal(3, varz.GetProperty("in_msgs").GetInt64());
        Assert.Equal(7, varz.GetProperty("in_bytes").GetInt64());
        Assert.Equal(2, varz.GetProperty("out_msgs").GetInt64());
        Assert.Equal(6, varz.GetProperty("out_bytes").GetInt64());
        Assert.Equal(1, varz.GetProperty("connections").GetInt32());
        Assert.Equal(2, varz.GetProperty("total_connections").GetInt64());
        // Only the server's own are left, as in Go: 40 in the system account and 3 system-service ones in $G.
        Assert.Equal(43, varz.GetProperty("subscriptions").GetInt64());
    }

    [Fact]
    public async Task Auth_ShowsTheAuthorizedUser()
    {
        await using var server = await OurMonitoredServer.StartAsync(o =>
        {
            o.Username = "ann";
            o.Password = "secret";
        });
        await using var client = await RawClient.ConnectAsync(server.ClientPort);
        await client.ConnectAndReadInfoAsync("""{"verbose":false,"user":"ann","pass":"secret"}""");
        await client.SyncAsync();

        var plain = (await server.GetJsonAsync("/connz")).GetProperty("connections")[0];
        Assert.False(plain.TryGetProperty("authorized_user", out _));
        var withAuth = (await server.GetJsonAsync("/connz?auth=1")).GetProperty("connections")[0];
        Assert.Equal("ann", withAuth.GetProperty("authorized_user").GetString());
        Assert.False(withAuth.TryGetProperty("account", out _));
        Assert.Equal(1, (await server.GetJsonAsync("/connz?auth=1&user=ann")).GetProperty("num_connections").GetInt32());
        Assert.Equal(0, (await server.GetJsonAsync("/connz?auth=1&user=bob")).GetProperty("num_connections").GetInt32());
        Assert.True((await server.GetJsonAsync("/varz")).GetProperty("auth_required").GetBoolean());
    }

    private static async Task<List<RawClient>> ConnectManyAsync(MonitoredServer server, int count)
    {
        var clients = new List<RawClient>();
        for (var i = 0; i < count; i++)
        {
            var client = await RawClient.ConnectAsync(server.ClientPort);
            clients.Add(client);
            await client.ConnectAndReadInfoAsync($$"""{"verbose":false,"name":"c{{i}}"}""");
            await client.SyncAsync();
        }
        return clients;
    }

    private static async Task DisposeAllAsync(List<RawClient> clients)
    {
        foreach (var client in clients)
        {
            await client.DisposeAsync();
        }
    }

    private static List<string> Names(JsonElement connz) =>
        connz.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString()!).ToList();
}
