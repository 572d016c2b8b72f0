using System.Text.Json;
using Nats.Server.IntegrationTests.Monitoring;

namespace Nats.Server.IntegrationTests.SystemAccount;

/// <summary>$SYS request services: the same requests to Go and ours, replies compared field by field.</summary>
public sealed partial class SystemAccountDifferentialTests
{
    [Theory]
    [InlineData("$SYS.REQ.SERVER.PING", "")]
    [InlineData("$SYS.REQ.SERVER.PING.STATSZ", "")]
    [InlineData("$SYS.REQ.SERVER.<id>.STATSZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.VARZ", "")]
    [InlineData("$SYS.REQ.SERVER.<id>.VARZ", "{}")]
    [InlineData("$SYS.REQ.SERVER.PING.SUBSZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.SUBSZ", "{\"subscriptions\":true,\"test\":\"foo\"}")]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "{\"subscriptions\":true,\"sort\":\"cid\"}")]
    [InlineData("$SYS.REQ.SERVER.<id>.CONNZ", "{\"acc\":\"A\",\"state\":2}")]
    [InlineData("$SYS.REQ.SERVER.PING.ROUTEZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.GATEWAYZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.LEAFZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.ACCOUNTZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.ACCOUNTZ", "{\"account\":\"A\"}")]
    [InlineData("$SYS.REQ.SERVER.PING.JSZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.HEALTHZ", "")]
    [InlineData("$SYS.REQ.SERVER.PING.VARZ", "{\"server_name\":\"N\"}")]
    [InlineData("$SYS.REQ.ACCOUNT.A.CONNZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.SUBSZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.INFO", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.STATZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.LEAFZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.CONNS", "")]
    [InlineData("$SYS.REQ.ACCOUNT.PING.STATZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.NOPE.INFO", "")]
    [InlineData("$SYS.REQ.SERVER.PING.VARZ", "{bad")]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "{\"subscriptions\":\"yes\"}")]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "{\"sort\":\"nope\"}")]
    [InlineData("$SYS.REQ.SERVER.PING.SUBSZ", "{\"test\":\"foo.*\"}")]
    public async Task Request_ReplyMatchesGo(string subject, string body)
    {
        var go = await RequestAsync(_go, subject, body);
        var ours = await RequestAsync(_ours, subject, body);
        AssertSameLine(go, ours);
        JsonCompare.SameKeys(go.Json, ours.Json, "");
        JsonCompare.SameValues(go.Json, ours.Json, "server.ver", "server.jetstream", "server.host");
        if (go.Json.TryGetProperty("error", out var error))
        {
            JsonCompare.SameValues(go.Json, ours.Json, "error");
            Assert.True(error.GetProperty("code").GetInt32() is 400 or 500);
        }
        if (go.Json.TryGetProperty("data", out var data) && data.ValueKind == JsonValueKind.Object)
        {
            foreach (var key in new[] { "num_connections", "total", "num_subscriptions", "offset", "limit", "status", "system_account", "disabled", "account_name", "client_connections" })
            {
                if (data.TryGetProperty(key, out _))
                {
                    JsonCompare.SameValues(go.Json, ours.Json, "data." + key);
                }
            }
        }
    }

    [Theory]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.PING.CONNZ", "{\"subscriptions\":true}")]
    [InlineData("$SYS.REQ.SERVER.PING.CONNZ", "{\"acc\":\"SYS\"}")]
    [InlineData("$SYS.REQ.ACCOUNT.PING.STATZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.PING.STATZ", "{\"accounts\":[\"SYS\"],\"include_unused\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.PING.CONNZ", "{\"subscriptions\":1}")]
    public async Task AccountUser_SystemImports_MatchGo(string subject, string body)
    {
        var go = await AccountRequestAsync(_go, subject, body);
        var ours = await AccountRequestAsync(_ours, subject, body);
        AssertSameLine(go, ours);
        Assert.DoesNotContain("  ", ours.Line);
        JsonCompare.SameKeys(go.Json, ours.Json, "");
        foreach (var path in new[] { "error", "data.num_connections", "data.total" })
        {
            if (go.Json.TryGetProperty(path.Split('.')[0], out var first) && (path.IndexOf('.') < 0 || first.TryGetProperty(path.Split('.')[1], out _)))
            {
                JsonCompare.SameValues(go.Json, ours.Json, path);
            }
        }
        if (go.Json.TryGetProperty("data", out var data) && data.TryGetProperty("account_statz", out var statz))
        {
            // Clamped to the requester's account whatever the body asks for.
            Assert.Equal(statz.EnumerateArray().Select(a => a.GetProperty("acc").GetString()),
                ours.Json.GetProperty("data").GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()));
        }
    }

    [Fact]
    public async Task AccountUser_GetsNoResponders_ForUnimportedSystemRequests()
    {
        foreach (var server in new[] { _go, _ours })
        {
            await using var a = await SysClient.ConnectAsync(server.ClientPort, "a", "a", ",\"no_responders\":true");
            foreach (var subject in new[] { "$SYS.REQ.ACCOUNT.A.CONNZ", "$SYS.REQ.SERVER.PING", "$SYS.REQ.ACCOUNT.PING.SUBSZ" })
            {
                await a.SendAsync($"SUB _INBOX.nr 5\r\nPUB {subject} _INBOX.nr 0\r\n\r\n");
                Assert.Contains("NATS/1.0 503", await a.Raw.ReadUntilAsync("\r\n\r\n"));
            }
        }
    }

    private static async Task<SysMessage> AccountRequestAsync(MonitoredServer server, string subject, string body)
    {
        await using var sys = await SysClient.ConnectAsync(server.ClientPort, "sys", "p");
        await using var a = await SysClient.ConnectAsync(server.ClientPort, "a", "a", ",\"name\":\"member\"");
        return await a.RequestAsync(subject, body);
    }

    [Fact]
    public async Task FilteredOrMalformedRequests_GetNoReply_LikeGo()
    {
        string[] silent =
        [
            "$SYS.REQ.SERVER.PING.VARZ|{\"server_name\":\"not-this-one\"}",
            "$SYS.REQ.SERVER.PING.CONNZ|{\"cluster\":\"c1\"}",
            "$SYS.REQ.SERVER.PING.STATSZ|{\"tags\":[\"x\"]}",
            "$SYS.REQ.ACCOUNT.PING.STATZ|{\"accounts\":[\"NOPE\"]}",
            "$SYS.REQ.ACCOUNT.A.CONNS|{\"acc\":\"B\"}",
        ];
        foreach (var server in new[] { _go, _ours })
        {
            await using var sys = await SysClient.ConnectAsync(server.ClientPort, "sys", "p");
            foreach (var request in silent)
            {
                var parts = request.Split('|');
                await sys.SendAsync($"SUB _INBOX.silent 7\r\nPUB {parts[0]} _INBOX.silent {parts[1].Length}\r\n{parts[1]}\r\n");
            }
            // A request that is answered: its reply must be the first thing on the inbox.
            await sys.SendAsync("PUB $SYS.REQ.SERVER.PING.HEALTHZ _INBOX.silent 0\r\n\r\n");
            var first = await sys.ReadMessageAsync();
            Assert.Equal("ok", first.Json.GetProperty("data").GetProperty("status").GetString());
        }
    }

    [Fact]
    public async Task SubscriberCounts_MatchGo()
    {
        string[] requests =
        [
            "$SYS.DEBUG.SUBSCRIBERS|foo.bar", "$SYS.DEBUG.SUBSCRIBERS|foo.*", "$SYS.DEBUG.SUBSCRIBERS|foo.bar q",
            "$SYS.DEBUG.SUBSCRIBERS|>", "$SYS.DEBUG.SUBSCRIBERS|",
            "$SYS.REQ.ACCOUNT.NSUBS|{\"acc\":\"A\",\"subject\":\"foo.bar\"}",
            "$SYS.REQ.ACCOUNT.NSUBS|{\"acc\":\"A\",\"subject\":\"foo.bar\",\"queue\":\"cQ==\"}",
            "$SYS.REQ.ACCOUNT.NSUBS|{\"acc\":\"SYS\",\"subject\":\"foo.>\"}",
        ];
        foreach (var request in requests)
        {
            var parts = request.Split('|');
            var go = await CountAsync(_go, parts[0], parts[1]);
            var ours = await CountAsync(_ours, parts[0], parts[1]);
            Assert.True(go == ours, $"{request}: go={go} ours={ours}");
        }
    }

    private static async Task<string> CountAsync(MonitoredServer server, string subject, string body)
    {
        await using var sys = await SysClient.ConnectAsync(server.ClientPort, "sys", "p");
        await using var a = await SysClient.ConnectAsync(server.ClientPort, "a", "a");
        await sys.SendAsync("SUB foo.bar 1\r\nSUB foo.* 2\r\nSUB foo.bar q 3\r\nSUB foo.bar q 4\r\nSUB foo.bar p 5\r\n");
        await a.SendAsync("SUB foo.bar 1\r\nSUB foo.bar q 2\r\nSUB foo.> 3\r\n");
        await a.SyncAsync();
        return (await sys.RequestAsync(subject, body)).Body;
    }

    private static async Task<SysMessage> RequestAsync(MonitoredServer server, string subject, string body)
    {
        var id = (await server.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;
        await using var sys = await SysClient.ConnectAsync(server.ClientPort, "sys", "p");
        await using var a = await SysClient.ConnectAsync(server.ClientPort, "a", "a", ",\"name\":\"member\"");
        await a.SendAsync("SUB foo 1\r\nPUB foo 2\r\nhi\r\n");
        await a.SyncAsync();
        return await sys.RequestAsync(subject.Replace("<id>", id, StringComparison.Ordinal), body);
    }
}
