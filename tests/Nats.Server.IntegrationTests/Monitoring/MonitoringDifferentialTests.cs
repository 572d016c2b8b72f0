using System.Net;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>
/// Go 2.9.10 and ours run the same scenario; every endpoint is fetched from both and compared field
/// by field. Both have the system account $SYS with Go's 40 internal subscriptions and the 3 system
/// service subscriptions in $G (compared exactly). Documented differences: Go shows those as an
/// "imports" list on $G and three service exports on $SYS, and gives the internal clients cids
/// 1-3; we serve them without import/export entries yet, so those paths are left out, and
/// connections are matched by name rather than cid.
/// </summary>
public sealed partial class MonitoringDifferentialTests : IAsyncLifetime
{
    private MonitoredServer _go = null!;
    private MonitoredServer _ours = null!;

    public async Task InitializeAsync()
    {
        _go = await GoMonitoredServer.StartAsync();
        _ours = await OurMonitoredServer.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _go.DisposeAsync();
        await _ours.DisposeAsync();
    }

    [Fact]
    public async Task Varz_SameFieldsAndCounters()
    {
        var goIdle = await _go.GetJsonAsync("/varz");
        var ourIdle = await _ours.GetJsonAsync("/varz");
        await using var goScenario = await MonitoringScenario.RunAsync(_go);
        await using var ourScenario = await MonitoringScenario.RunAsync(_ours);

        var go = await _go.GetJsonAsync("/varz");
        var ours = await _ours.GetJsonAsync("/varz");
        JsonCompare.SameKeys(go, ours, "", "http_req_stats");
        JsonCompare.SameValues(go, ours,
            "version", "proto", "host", "max_connections", "ping_interval", "ping_max", "http_host", "http_port",
            "http_base_path", "https_port", "auth_timeout", "max_control_line", "max_payload", "max_pending",
            "cluster", "gateway", "leaf", "mqtt", "websocket", "jetstream", "tls_timeout", "write_deadline",
            "connections", "total_connections", "routes", "remotes", "leafnodes",
            "in_msgs", "out_msgs", "in_bytes", "out_bytes", "slow_consumers");
        Assert.Equal(4, ours.GetProperty("in_msgs").GetInt64());
        Assert.Equal(3, ours.GetProperty("out_msgs").GetInt64());
        Assert.Equal(
            go.GetProperty("subscriptions").GetInt64() - goIdle.GetProperty("subscriptions").GetInt64(),
            ours.GetProperty("subscriptions").GetInt64() - ourIdle.GetProperty("subscriptions").GetInt64());
        // The system account's 40 internal subscriptions, $G's 3 system-service ones and the scenario's 3.
        Assert.Equal(46, ours.GetProperty("subscriptions").GetInt64());
        Assert.Equal(go.GetProperty("subscriptions").GetInt64(), ours.GetProperty("subscriptions").GetInt64());
        Assert.Equal(ours.GetProperty("port").GetInt32(), _ours.ClientPort);

        // Every request is counted under its endpoint, the same way on both.
        foreach (var server in new[] { (_go, go), (_ours, ours) })
        {
            var stats = server.Item2.GetProperty("http_req_stats").EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetInt64());
            Assert.Equal(server.Item1.RequestsMade, new SortedDictionary<string, long>(stats, StringComparer.Ordinal));
        }

        AssertGoTime(ours.GetProperty("start").GetString()!);
        AssertGoTime(ours.GetProperty("now").GetString()!);
        Assert.Matches(@"^\d+s$", ours.GetProperty("uptime").GetString()!);
        Assert.True(ours.GetProperty("mem").GetInt64() > 0);
    }

    [Fact]
    public async Task Connz_OpenClosedAndSubscriptions()
    {
        await using var goScenario = await MonitoringScenario.RunAsync(_go);
        await using var ourScenario = await MonitoringScenario.RunAsync(_ours);

        // The closed subs=detail query goes last: Go 2.9.10 writes the detail list into its shared
        // closed-connection record (fixed upstream later), so it would show up in every later answer.
        string[] queries =
        [
            "/connz", "/connz?subs=1", "/connz?subs=detail", "/connz?state=any&sort=msgs_from", "/connz?limit=1&offset=1",
            "/connz?auth=true", "/connz?state=closed&sort=reason", "/connz?state=any&subs=1", "/connz?acc=$G&auth=1",
            "/connz?state=closed&subs=detail",
        ];
        foreach (var query in queries)
        {
            var go = await _go.GetJsonAsync(query);
            var ours = await _ours.GetJsonAsync(query);
            JsonCompare.SameKeys(go, ours, query);
            JsonCompare.SameValues(go, ours, "num_connections", "total", "offset", "limit");
            var goConns = go.GetProperty("connections").EnumerateArray().ToList();
            var ourConns = ours.GetProperty("connections").EnumerateArray().ToList();
            // Same connections in the same order (sorting), matched by name.
            Assert.Equal(goConns.Select(Name), ourConns.Select(Name));
            for (var i = 0; i < goConns.Count; i++)
            {
                JsonCompare.SameKeys(goConns[i], ourConns[i], $"{query}[{Name(goConns[i])}]");
                JsonCompare.SameValues(goConns[i], ourConns[i], ComparableConnFields(goConns[i]));
                Assert.Equal(SubscriptionSet(goConns[i]), SubscriptionSet(ourConns[i]));
                AssertGoTime(ourConns[i].GetProperty("start").GetString()!);
                Assert.Matches(@"^(\d+(\.\d+)?(ns|µs|ms|s))+$", ourConns[i].GetProperty("rtt").GetString()!);
            }
        }
    }

    [Fact]
    public async Task Subsz_StatsAndFilteredLists()
    {
        var goIdle = await _go.GetJsonAsync("/subsz");
        var ourIdle = await _ours.GetJsonAsync("/subsz");
        Assert.Equal(goIdle.GetProperty("num_subscriptions").GetInt64(), ourIdle.GetProperty("num_subscriptions").GetInt64());
        await using var goScenario = await MonitoringScenario.RunAsync(_go);
        await using var ourScenario = await MonitoringScenario.RunAsync(_ours);

        var go = await _go.GetJsonAsync("/subsz");
        var ours = await _ours.GetJsonAsync("/subscriptionsz");
        JsonCompare.SameKeys(go, ours);
        Assert.Equal(
            go.GetProperty("num_subscriptions").GetInt64() - goIdle.GetProperty("num_subscriptions").GetInt64(),
            ours.GetProperty("num_subscriptions").GetInt64() - ourIdle.GetProperty("num_subscriptions").GetInt64());
        Assert.Equal(
            go.GetProperty("num_removes").GetInt64() - goIdle.GetProperty("num_removes").GetInt64(),
            ours.GetProperty("num_removes").GetInt64());
        Assert.Equal(go.GetProperty("num_inserts").GetInt64(), ours.GetProperty("num_inserts").GetInt64());

        foreach (var query in new[] { "/subsz?subs=1&test=bar.x", "/subsz?subs=1&test=foo", "/subsz?subs=1&test=nothing.here", "/subsz?subs=1&acc=$G&test=foo", "/subsz?subs=1&test=foo&offset=1" })
        {
            var goList = await _go.GetJsonAsync(query);
            var ourList = await _ours.GetJsonAsync(query);
            JsonCompare.SameKeys(goList, ourList, query);
            if (goList.TryGetProperty("subscriptions_list", out var goSubs))
            {
                JsonCompare.SameValues(goList, ourList, "total", "offset", "limit");
                var ourSubs = ourList.GetProperty("subscriptions_list");
                Assert.Equal(goSubs.EnumerateArray().Select(WithoutCid).Order(), ourSubs.EnumerateArray().Select(WithoutCid).Order());
            }
        }
    }

    [Fact]
    public async Task AccountEndpoints_GlobalAccountMatches()
    {
        await using var goScenario = await MonitoringScenario.RunAsync(_go);
        await using var ourScenario = await MonitoringScenario.RunAsync(_ours);

        var go = await _go.GetJsonAsync("/accountz");
        var ours = await _ours.GetJsonAsync("/accountz");
        JsonCompare.SameKeys(go, ours, "");
        JsonCompare.SameValues(go, ours, "system_account");
        // Go lists accounts in sync.Map order, which varies from run to run.
        Assert.Equal(go.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal),
            ours.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal));

        var goDetail = await _go.GetJsonAsync("/accountz?acc=$G");
        var ourDetail = await _ours.GetJsonAsync("/accountz?acc=$G");
        JsonCompare.SameKeys(goDetail, ourDetail, "");
        // Go lists the system service imports from a map: compared as sets.
        Assert.Equal(await AccountzImportExportTests.Entries(_go, "$G", "imports"), await AccountzImportExportTests.Entries(_ours, "$G", "imports"));
        JsonCompare.SameValues(goDetail, ourDetail, "account_detail.subscriptions");
        JsonCompare.SameValues(goDetail, ourDetail, "system_account");
        JsonCompare.SameValues(goDetail, ourDetail, "account_detail.account_name", "account_detail.expired", "account_detail.complete",
            "account_detail.jetstream_enabled", "account_detail.leafnode_connections", "account_detail.client_connections");

        // The system account: same subscriptions, same sublist counters, same service exports.
        var goSys = await _go.GetJsonAsync("/accountz?acc=$SYS");
        var ourSys = await _ours.GetJsonAsync("/accountz?acc=$SYS");
        JsonCompare.SameKeys(goSys, ourSys, "");
        Assert.Equal(await AccountzImportExportTests.Entries(_go, "$SYS", "exports"), await AccountzImportExportTests.Entries(_ours, "$SYS", "exports"));
        JsonCompare.SameValues(goSys, ourSys, "system_account", "account_detail.account_name", "account_detail.is_system",
            "account_detail.client_connections", "account_detail.subscriptions", "account_detail.sublist_stats.num_subscriptions",
            "account_detail.sublist_stats.num_inserts", "account_detail.sublist_stats.num_removes");
        Assert.Equal(40, ourSys.GetProperty("account_detail").GetProperty("subscriptions").GetInt64());

        foreach (var query in new[] { "/accstatz", "/accstatz?unused=1" })
        {
            var goStat = (await _go.GetJsonAsync(query)).GetProperty("account_statz").EnumerateArray().Single(a => a.GetProperty("acc").GetString() == "$G");
            var ourStatz = await _ours.GetJsonAsync(query);
            var ourStat = ourStatz.GetProperty("account_statz").EnumerateArray().Single(a => a.GetProperty("acc").GetString() == "$G");
            JsonCompare.SameKeys(goStat, ourStat, query);
            Assert.Equal(goStat.GetRawText(), ourStat.GetRawText());
        }
    }

    [Fact]
    public async Task Connz_UnknownAccount_AnswersLikeGo()
    {
        // Go returns before filling in the server id, with a null connection list.
        var go = await _go.GetAsync("/connz?acc=nope");
        var ours = await _ours.GetAsync("/connz?acc=nope");
        Assert.Equal(go.Status, ours.Status);
        Assert.Equal(Normalize(go.Body), Normalize(ours.Body));
    }

    [Theory]
    [InlineData("/routez")]
    [InlineData("/gatewayz")]
    [InlineData("/leafz")]
    [InlineData("/jsz")]
    [InlineData("/jsz?accounts=true")]
    [InlineData("/healthz")]
    [InlineData("/healthz?js-enabled-only=true")]
    public async Task UnconfiguredFeatures_AnswerLikeGo(string query)
    {
        var go = await _go.GetAsync(query);
        var ours = await _ours.GetAsync(query);
        Assert.Equal(go.Status, ours.Status);
        Assert.Equal(go.ContentType, ours.ContentType);
        Assert.Equal(Normalize(go.Body), Normalize(ours.Body));
    }

    [Theory]
    [InlineData("/connz?sort=bogus")]
    [InlineData("/connz?sort=stop")]
    [InlineData("/connz?sort=reason&state=open")]
    [InlineData("/connz?state=x")]
    [InlineData("/connz?offset=abc")]
    [InlineData("/connz?subs=maybe")]
    [InlineData("/connz?cid=-1")]
    [InlineData("/subsz?test=foo.*")]
    [InlineData("/subsz?subs=2")]
    [InlineData("/accountz?acc=nope")]
    [InlineData("/healthz?js-enabled=x")]
    [InlineData("/jsz?leader-only=true")]
    [InlineData("/accstatz?unused=yes")]
    [InlineData("/nonexistent")]
    [InlineData("/varz/extra")]
    public async Task BadRequests_SameStatusAndText(string query)
    {
        var go = await _go.GetAsync(query);
        var ours = await _ours.GetAsync(query);
        Assert.Equal(go.Status, ours.Status);
        Assert.Equal(go.Body, ours.Body);
    }

    [Fact]
    public async Task JsonpCallbackAndIndex()
    {
        var go = await _go.GetAsync("/connz?callback=cb");
        var ours = await _ours.GetAsync("/connz?callback=cb");
        Assert.Equal(go.ContentType, ours.ContentType);
        Assert.StartsWith("cb({", ours.Body);
        Assert.EndsWith("})", ours.Body);

        var goIndex = await _go.GetAsync("/");
        var ourIndex = await _ours.GetAsync("/");
        Assert.Equal(HttpStatusCode.OK, ourIndex.Status);
        Assert.Equal(goIndex.ContentType, ourIndex.ContentType);
        Assert.Equal(Links(goIndex.Body), Links(ourIndex.Body));
    }

    private static string Name(JsonElement conn) => conn.GetProperty("name").GetString()!;

    /// <summary>Every field except ids, ports, times and measured durations.</summary>
    private static string[] ComparableConnFields(JsonElement conn) =>
        conn.EnumerateObject().Select(p => p.Name)
            .Except(["cid", "port", "start", "last_activity", "stop", "rtt", "uptime", "idle", "subscriptions_list", "subscriptions_list_detail"])
            .ToArray();

    private static List<string> SubscriptionSet(JsonElement conn)
    {
        if (conn.TryGetProperty("subscriptions_list", out var list))
        {
            return list.EnumerateArray().Select(s => s.GetString()!).Order().ToList();
        }
        if (conn.TryGetProperty("subscriptions_list_detail", out var detail))
        {
            return detail.EnumerateArray().Select(WithoutCid).Order().ToList();
        }
        return [];
    }

    private static string WithoutCid(JsonElement detail) =>
        string.Join(",", detail.EnumerateObject().Where(p => p.Name != "cid").Select(p => $"{p.Name}={p.Value.GetRawText()}"));

    private static string Normalize(string body) =>
        NowPattern().Replace(ServerIdPattern().Replace(body, "\"server_id\": \"ID\""), "\"now\": \"TIME\"");

    private static List<string> Links(string html) => LinkPattern().Matches(html).Select(m => m.Groups[1].Value).ToList();

    private static void AssertGoTime(string text) => Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$", text);

    [GeneratedRegex("\"server_id\": \"N[A-Z0-9]{55}\"")]
    private static partial Regex ServerIdPattern();

    [GeneratedRegex("\"now\": \"[^\"]+\"")]
    private static partial Regex NowPattern();

    [GeneratedRegex(@"<a href=\./(\w+)")]
    private static partial Regex LinkPattern();
}
