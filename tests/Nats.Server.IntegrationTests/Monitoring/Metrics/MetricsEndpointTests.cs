using System.Net.Http.Headers;
using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Server.IntegrationTests.Core;
using NATS.Client.JetStream;

namespace Nats.Server.IntegrationTests.Monitoring.Metrics;

/// <summary>/metrics: parsed by Prometheus's own parser in both formats, and equal to /varz and /accstatz at the same moment.</summary>
public sealed class MetricsEndpointTests
{
    private const string Config = """
        accounts {
          A: { users: [ { user: a, password: a } ] }
          B: { users: [ { user: b, password: b } ] }
        }
        """;

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Scrape_Parses_AndEqualsVarzAndAccstatz(bool openMetrics)
    {
        var options = ConfigLoader.FromText(Config);
        options.Host = "127.0.0.1";
        options.Port = 0;
        options.HttpPort = -1;
        await using var server = await OurMonitoredServer.StartAsync(options);

        // Traffic in account A: 3 messages of 5 bytes published, each delivered to two subscribers.
        await using var sub = await RawClient.ConnectAsync(server.ClientPort);
        await sub.ConnectAndReadInfoAsync("""{"verbose":false,"user":"a","pass":"a"}""");
        await sub.SendAsync("SUB orders 1\r\nSUB orders.> 2\r\nSUB orders 3\r\n");
        await sub.SyncAsync();
        await using var pub = await RawClient.ConnectAsync(server.ClientPort);
        await pub.ConnectAndReadInfoAsync("""{"verbose":false,"user":"a","pass":"a"}""");
        await pub.SendAsync("PUB orders 5\r\nhello\r\nPUB orders 5\r\nhello\r\nPUB orders 5\r\nhello\r\n");
        await pub.SyncAsync();
        await using var idle = await RawClient.ConnectAsync(server.ClientPort);
        await idle.ConnectAndReadInfoAsync("""{"verbose":false,"user":"b","pass":"b"}""");
        await sub.SyncAsync();

        // Quiesced: every PING answered, so nothing is in flight between the three reads.
        // The server's own timed events (system account publishes) can still add a subject to the match
        // cache at any moment, so the scrape is compared with a window in which /subsz did not change.
        JsonElement varzBefore, varz, accstatz, subsz;
        string scrape;
        var attempts = 0;
        while (true)
        {
            var subszBefore = await server.GetJsonAsync("/subsz");
            varzBefore = await server.GetJsonAsync("/varz");
            scrape = await ScrapeAsync(server, openMetrics);
            varz = await server.GetJsonAsync("/varz");
            accstatz = await server.GetJsonAsync("/accstatz?unused=1");
            subsz = await server.GetJsonAsync("/subsz");
            if (subszBefore.GetRawText() == subsz.GetRawText() || ++attempts == 20)
            {
                break;
            }
        }

        var samples = await MetricsScrape.ParseAsync(scrape, openMetrics);
        var serverId = varz.GetProperty("server_id").GetString()!;
        double Varz(string key)
        {
            var sample = Assert.Single(samples, s => s.Name == "gnatsd_varz_" + key);
            Assert.Equal("gauge", sample.Type);
            Assert.Equal(serverId, sample.Labels["server_id"]);
            return sample.Value;
        }

        foreach (var key in new[]
                 {
                     "connections", "total_connections", "subscriptions", "in_msgs", "out_msgs", "in_bytes", "out_bytes",
                     "slow_consumers", "cores", "gomaxprocs", "max_connections", "max_payload", "max_pending",
                     "max_control_line", "ping_interval", "ping_max", "write_deadline", "port", "http_port", "routes", "leafnodes",
                 })
        {
            Assert.True(varz.GetProperty(key).GetDouble() == Varz(key), $"{key}: /varz {varz.GetProperty(key)}, /metrics {Varz(key)}");
            Assert.Equal(varzBefore.GetProperty(key).GetDouble(), varz.GetProperty(key).GetDouble());
        }
        // The numbers are the traffic above, not zeros that would agree trivially.
        Assert.Equal(3, Varz("connections"));
        Assert.Equal(3, Varz("in_msgs"));
        Assert.Equal(15, Varz("in_bytes"));
        Assert.Equal(6, Varz("out_msgs"));
        Assert.Equal(30, Varz("out_bytes"));
        Assert.True(Varz("mem") > 0);
        Assert.Equal(varz.GetProperty("server_name").GetString(), Assert.Single(samples, s => s.Name == "gnatsd_varz_server_name").Labels["value"]);
        foreach (var key in new[] { "num_subscriptions", "num_cache", "num_inserts", "num_removes", "num_matches", "cache_hit_rate", "max_fanout", "avg_fanout" })
        {
            var sample = Assert.Single(samples, s => s.Name == "gnatsd_subsz_" + key);
            Assert.True(subsz.GetProperty(key).GetDouble() == sample.Value, $"subsz {key}: /subsz {subsz.GetProperty(key)}, /metrics {sample.Value}");
        }
        Assert.True(Assert.Single(samples, s => s.Name == "gnatsd_subsz_num_matches").Value > 0);
        Assert.Equal(0, Assert.Single(samples, s => s.Name == "gnatsd_healthz_status").Value);

        foreach (var account in accstatz.GetProperty("account_statz").EnumerateArray())
        {
            var name = account.GetProperty("acc").GetString()!;
            double Acc(string metric)
            {
                var sample = Assert.Single(samples, s => s.Name == "gnatsd_accstatz_" + metric && s.Labels["account"] == name);
                Assert.Equal(name, sample.Labels["account_name"]);
                Assert.Equal(serverId, sample.Labels["server_id"]);
                return sample.Value;
            }
            Assert.Equal(account.GetProperty("conns").GetDouble(), Acc("current_connections"));
            Assert.Equal(account.GetProperty("total_conns").GetDouble(), Acc("total_connections"));
            Assert.Equal(account.GetProperty("received").GetProperty("msgs").GetDouble(), Acc("received_messages"));
            Assert.Equal(account.GetProperty("received").GetProperty("bytes").GetDouble(), Acc("received_bytes"));
            Assert.Equal(account.GetProperty("sent").GetProperty("msgs").GetDouble(), Acc("sent_messages"));
            Assert.Equal(account.GetProperty("sent").GetProperty("bytes").GetDouble(), Acc("sent_bytes"));
            Assert.Equal(account.GetProperty("slow_consumers").GetDouble(), Acc("slow_consumers"));
            if (name == "A")
            {
                Assert.Equal(2, Acc("current_connections"));
                Assert.Equal(3, Acc("received_messages"));
                Assert.Equal(6, Acc("sent_messages"));
            }
        }
        Assert.Contains(samples, s => s.Name == "gnatsd_accstatz_current_connections" && s.Labels["account"] == "B" && s.Value == 1);
        // Every account also holds the server's system-service imports; A has the test's 3 on top of B's.
        var subscriptions = samples.Where(s => s.Name == "gnatsd_accstatz_subscriptions").ToDictionary(s => s.Labels["account"], s => s.Value);
        Assert.Equal(3, subscriptions["A"] - subscriptions["B"]);
        Assert.Equal(Varz("subscriptions"), subscriptions.Values.Sum());
    }

    [Fact]
    public async Task ContentType_FollowsTheScrapersAcceptHeader()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        using var http = new HttpClient();
        var url = $"http://127.0.0.1:{server.MonitorPort}/metrics";
        using var classic = await http.GetAsync(url);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", classic.Content.Headers.ContentType?.ToString());
        using var request = new HttpRequestMessage(HttpMethod.Get, url);
        // What Prometheus 2.x sends.
        request.Headers.TryAddWithoutValidation("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1");
        using var open = await http.SendAsync(request);
        Assert.StartsWith("application/openmetrics-text", open.Content.Headers.ContentType?.ToString());
        Assert.EndsWith("# EOF\n", await open.Content.ReadAsStringAsync());
        // /metrics is ours, not Go's: it must not show up in /varz http_req_stats.
        var varz = await server.GetJsonAsync("/varz");
        Assert.False(varz.GetProperty("http_req_stats").TryGetProperty("/metrics", out _));
    }

    [Fact]
    public async Task JetStreamTotals_EqualJsz()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-metrics-js-").FullName;
        try
        {
            var options = new ServerOptions { Host = "127.0.0.1", Port = 0, HttpPort = -1 };
            options.JetStream.Enabled = true;
            options.JetStream.StoreDir = storeDir;
            await using var server = await OurMonitoredServer.StartAsync(options);
            await using var connection = new NATS.Client.Core.NatsConnection(new NATS.Client.Core.NatsOpts
            {
                Url = $"nats://127.0.0.1:{server.ClientPort}",
                RequestTimeout = TimeSpan.FromSeconds(20),
            });
            var js = new NATS.Client.JetStream.NatsJSContext(connection);
            await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig("M", ["m.>"]));
            await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig("MEM", ["mem.>"]) { Storage = NATS.Client.JetStream.Models.StreamConfigStorage.Memory });
            for (var i = 0; i < 5; i++)
            {
                (await js.PublishAsync($"m.{i}", $"payload {i}")).EnsureSuccess();
            }
            (await js.PublishAsync("mem.a", "in memory")).EnsureSuccess();
            await js.CreateOrUpdateConsumerAsync("M", new NATS.Client.JetStream.Models.ConsumerConfig("C"));

            var scrape = await ScrapeAsync(server, openMetrics: true);
            var jsz = await server.GetJsonAsync("/jsz");
            var samples = await MetricsScrape.ParseAsync(scrape, openMetrics: true);
            double Metric(string key) => Assert.Single(samples, s => s.Name == "jetstream_server_" + key).Value;

            Assert.Equal(0, Metric("jetstream_disabled"));
            Assert.Equal(2, Metric("total_streams"));
            Assert.Equal(1, Metric("total_consumers"));
            Assert.Equal(6, Metric("total_messages"));
            Assert.Equal(jsz.GetProperty("streams").GetDouble(), Metric("total_streams"));
            Assert.Equal(jsz.GetProperty("consumers").GetDouble(), Metric("total_consumers"));
            Assert.Equal(jsz.GetProperty("messages").GetDouble(), Metric("total_messages"));
            Assert.Equal(jsz.GetProperty("bytes").GetDouble(), Metric("total_message_bytes"));
            Assert.Equal(jsz.GetProperty("memory").GetDouble(), Metric("total_memory"));
            Assert.Equal(jsz.GetProperty("storage").GetDouble(), Metric("total_storage"));
            Assert.True(Metric("total_memory") > 0 && Metric("total_storage") > 0);
            Assert.Equal(jsz.GetProperty("config").GetProperty("max_memory").GetDouble(), Metric("max_memory"));
            Assert.Equal(jsz.GetProperty("api").GetProperty("errors").GetDouble(), Metric("api_errors"));
            // The scrape itself is not an API request: the totals read before and after it agree.
            Assert.Equal(jsz.GetProperty("api").GetProperty("total").GetDouble(), Metric("api_requests"));
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task JetStreamOff_ReportsDisabled()
    {
        await using var server = await OurMonitoredServer.StartAsync();
        var samples = await MetricsScrape.ParseAsync(await ScrapeAsync(server, openMetrics: false), openMetrics: false);
        Assert.Equal(1, Assert.Single(samples, s => s.Name == "jetstream_server_jetstream_disabled").Value);
        Assert.Equal(0, Assert.Single(samples, s => s.Name == "jetstream_server_total_streams").Value);
    }

    private static async Task<string> ScrapeAsync(MonitoredServer server, bool openMetrics)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        using var request = new HttpRequestMessage(HttpMethod.Get, $"http://127.0.0.1:{server.MonitorPort}/metrics");
        if (openMetrics)
        {
            request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("application/openmetrics-text"));
        }
        using var response = await http.SendAsync(request);
        response.EnsureSuccessStatusCode();
        return await response.Content.ReadAsStringAsync();
    }
}
