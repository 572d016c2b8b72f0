using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// Server (<c>max_file_store</c>, <c>max_memory_store</c>) and account (<c>max_file</c>, <c>max_mem</c>)
/// limits against Go 2.9.10: stream creates and updates that reserve too much (10047, 10028), publishes
/// past the account's limit (10002, message removed) and past the server's (10023), with the streams'
/// state and account info afterwards; every answer must be the same bytes after times are masked.
/// </summary>
public sealed class ResourceLimitsDifferentialTests
{
    private static readonly string Kilobyte = new('x', 1000);

    public static TheoryData<string> Scenarios => new(["account", "server"]);

    private static (string Config, (string Subject, string Body)[] Steps) Scenario(string name) => name switch
    {
        "account" => ("""
            accounts { A { jetstream: { max_file: 4096, max_mem: 2048, max_consumers: 3 }, users: [ {user: a, password: a} ] } }
            no_auth_user: a
            """,
        [
            ("$JS.API.INFO", ""),
            ("$JS.API.STREAM.CREATE.F1", """{"name":"F1","subjects":["f1"],"max_bytes":5000}"""),
            ("$JS.API.STREAM.CREATE.F1", """{"name":"F1","subjects":["f1"],"max_bytes":3000}"""),
            ("$JS.API.STREAM.CREATE.F2", """{"name":"F2","subjects":["f2"],"max_bytes":2000}"""),
            ("$JS.API.STREAM.CREATE.F2", """{"name":"F2","subjects":["f2"]}"""),
            ("$JS.API.STREAM.UPDATE.F1", """{"name":"F1","subjects":["f1"],"max_bytes":4000}"""),
            ("$JS.API.STREAM.UPDATE.F1", """{"name":"F1","subjects":["f1"],"max_bytes":5000}"""),
            ("$JS.API.STREAM.CREATE.M1", """{"name":"M1","subjects":["m1"],"storage":"memory","max_bytes":4096}"""),
            ("$JS.API.STREAM.CREATE.M1", """{"name":"M1","subjects":["m1"],"storage":"memory"}"""),
            ("$JS.API.STREAM.CREATE.C", """{"name":"C","subjects":["c"],"max_consumers":5}"""),
            ("f2", Kilobyte), ("f2", Kilobyte), ("f2", Kilobyte), ("f2", Kilobyte), ("f2", Kilobyte), ("f2", Kilobyte),
            ("m1", Kilobyte), ("m1", Kilobyte), ("m1", Kilobyte),
            ("$JS.API.STREAM.INFO.F2", ""),
            ("$JS.API.STREAM.INFO.M1", ""),
            ("$JS.API.STREAM.PURGE.F2", ""),
            ("f2", "after purge"),
            ("$JS.API.INFO", ""),
        ]),
        _ => ("""
            jetstream { max_file_store: 10000, max_memory_store: 5000 }
            """,
        [
            ("$JS.API.STREAM.CREATE.S1", """{"name":"S1","subjects":["s1"],"max_bytes":20000}"""),
            ("$JS.API.STREAM.CREATE.S1", """{"name":"S1","subjects":["s1"],"max_bytes":6000}"""),
            ("$JS.API.STREAM.CREATE.S2", """{"name":"S2","subjects":["s2"],"max_bytes":6000}"""),
            ("$JS.API.STREAM.CREATE.S2", """{"name":"S2","subjects":["s2"]}"""),
            ("$JS.API.STREAM.CREATE.M", """{"name":"M","subjects":["m"],"storage":"memory","max_bytes":6000}"""),
            ("$JS.API.STREAM.CREATE.M", """{"name":"M","subjects":["m"],"storage":"memory"}"""),
            ("s2", Kilobyte + Kilobyte), ("s2", Kilobyte + Kilobyte), ("s2", Kilobyte + Kilobyte), ("s2", Kilobyte + Kilobyte),
            ("s2", Kilobyte + Kilobyte), ("s2", Kilobyte + Kilobyte), ("s2", Kilobyte + Kilobyte),
            ("m", Kilobyte + Kilobyte), ("m", Kilobyte + Kilobyte), ("m", Kilobyte + Kilobyte), ("m", Kilobyte + Kilobyte),
            ("$JS.API.STREAM.INFO.S2", ""),
            ("$JS.API.STREAM.INFO.M", ""),
        ]),
    };

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task LimitsSameAsGo(string scenario)
    {
        var (config, steps) = Scenario(scenario);
        var settings = new ServerSettings { JetStream = true };
        settings.RawConfig.Add(config);
        var (go, ours) = await TestServers.StartPairAsync(settings);
        await using (go)
        await using (ours)
        {
            var goAnswers = await RunAsync(go, steps);
            var ourAnswers = await RunAsync(ours, steps);
            var differences = Enumerable.Range(0, steps.Length).Where(i => goAnswers[i] != ourAnswers[i])
                .Select(i => $"step {i} ({steps[i].Subject} {steps[i].Body[..Math.Min(40, steps[i].Body.Length)]}):\n  go:   {goAnswers[i]}\n  ours: {ourAnswers[i]}").ToList();
            Assert.True(differences.Count == 0, string.Join("\n", differences));
            // The scenario really reaches each limit (Go's answers carry every expected error).
            var all = string.Join("\n", goAnswers);
            foreach (var code in scenario == "account" ? new[] { "10047", "10028", "10002", "10026" } : ["10047", "10028", "10023"])
            {
                Assert.Contains($"\"err_code\":{code}", all, StringComparison.Ordinal);
            }
        }
    }

    /// <summary>NATS.Net sees Go's errors: a create over the account's file limit, then PubAcks refused past it.</summary>
    [Fact]
    public async Task NatsNetSeesAccountLimits()
    {
        var settings = new ServerSettings { JetStream = true };
        settings.RawConfig.Add("accounts { A { jetstream: { max_file: 4096 }, users: [ {user: a, password: a} ] } }\nno_auth_user: a");
        await using var server = await TestServers.StartOursAsync(settings);
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}" });
        var js = new NatsJSContext(nats);
        var create = await Assert.ThrowsAsync<NatsJSApiException>(() => js.CreateStreamAsync(new StreamConfig("BIG", ["big"]) { MaxBytes = 10_000 }).AsTask());
        Assert.Equal(10047, create.Error.ErrCode);
        await js.CreateStreamAsync(new StreamConfig("L", ["l"]));
        var accepted = 0;
        NatsJSApiException? refused = null;
        for (var i = 0; i < 10 && refused is null; i++)
        {
            try
            {
                (await js.PublishAsync("l", Kilobyte)).EnsureSuccess();
                accepted++;
            }
            catch (NatsJSApiException e)
            {
                refused = e;
            }
        }
        Assert.NotNull(refused);
        Assert.Equal(10002, refused.Error.ErrCode);
        // Four 1000-byte messages (with record overhead) pass 4096: the fourth is stored, found over, removed.
        Assert.Equal(3, accepted);
        var stream = await js.GetStreamAsync("L");
        Assert.Equal(3, stream.Info.State.Messages);
    }

    private static async Task<List<string>> RunAsync(ITestServer server, (string Subject, string Body)[] steps)
    {
        await using var requester = await JsRawRequester.ConnectAsync(server.Port);
        var answers = new List<string>();
        foreach (var (subject, body) in steps)
        {
            answers.Add(System.Text.RegularExpressions.Regex.Replace(await requester.RequestAsync(subject, body),
                @"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>"));
        }
        return answers;
    }
}
