using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// The same $JS.API requests and stream publishes, valid and invalid, sent to Go 2.9.10
/// (<c>nats-server -js -sd tmp</c>) and to ours; every answer must be byte-identical after times and ids
/// are masked (key order, omitted fields, err_codes, descriptions and Go's PubAck spacing included).
/// </summary>
public sealed class JetStreamApiDifferentialTests
{
    /// <summary>One step: a request (or publish with reply) and optional header lines.</summary>
    public sealed record Step(string Subject, string Body, string? Headers = null);

    private static Step S(string subject, string body = "", string? headers = null) => new(subject, body, headers);

    public static TheoryData<string> Scenarios => new(ScenarioSteps.Keys);

    private static readonly Dictionary<string, Step[]> ScenarioSteps = new()
    {
        ["stream-lifecycle"] =
        [
            S("$JS.API.STREAM.CREATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*"],"storage":"file"}"""),
            S("$JS.API.STREAM.CREATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*"],"storage":"file"}"""),
            S("$JS.API.STREAM.INFO.ORDERS"),
            S("orders.new", "one"),
            S("orders.new", "two"),
            S("orders.old", "three"),
            S("$JS.API.STREAM.INFO.ORDERS", """{"subjects_filter":">"}"""),
            S("$JS.API.STREAM.UPDATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*","more.>"],"max_msgs":100}"""),
            S("$JS.API.STREAM.NAMES"),
            S("$JS.API.STREAM.NAMES", """{"subject":"more.x"}"""),
            S("$JS.API.STREAM.LIST"),
            S("$JS.API.STREAM.MSG.GET.ORDERS", """{"seq":2}"""),
            S("$JS.API.STREAM.MSG.GET.ORDERS", """{"last_by_subj":"orders.new"}"""),
            S("$JS.API.STREAM.MSG.GET.ORDERS", """{"next_by_subj":"orders.old","seq":1}"""),
            S("$JS.API.STREAM.MSG.GET.ORDERS", """{"seq":99}"""),
            S("$JS.API.STREAM.MSG.GET.ORDERS", ""),
            S("$JS.API.STREAM.MSG.GET.ORDERS", """{"seq":1,"last_by_subj":"x"}"""),
            S("$JS.API.STREAM.MSG.DELETE.ORDERS", """{"seq":1}"""),
            S("$JS.API.STREAM.MSG.DELETE.ORDERS", """{"seq":1}"""),
            S("$JS.API.STREAM.MSG.DELETE.ORDERS", """{"seq":2,"no_erase":true}"""),
            S("$JS.API.STREAM.INFO.ORDERS", """{"deleted_details":true}"""),
            S("$JS.API.STREAM.PURGE.ORDERS", """{"seq":2,"keep":1}"""),
            S("$JS.API.STREAM.PURGE.ORDERS", """{"filter":"orders.old"}"""),
            S("$JS.API.STREAM.PURGE.ORDERS"),
            S("$JS.API.STREAM.INFO.ORDERS"),
            S("$JS.API.STREAM.DELETE.ORDERS", "{\"x\":1}"),
            S("$JS.API.STREAM.DELETE.ORDERS"),
            S("$JS.API.STREAM.DELETE.ORDERS"),
            S("$JS.API.STREAM.INFO.ORDERS"),
            S("$JS.API.STREAM.LIST"),
            S("$JS.API.STREAM.NAMES"),
        ],
        ["account-info"] =
        [
            S("$JS.API.INFO"),
            S("$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory"}"""),
            S("$JS.API.STREAM.CREATE.F", """{"name":"F","subjects":["f.>"]}"""),
            S("M", "hello"),
            S("f.1", "world"),
            S("$JS.API.STREAM.INFO.NOPE"),
            S("$JS.API.INFO"),
            S("$JS.API.STREAM.MSG.DELETE.M", """{"seq":5}"""),
            S("$JS.API.STREAM.MSG.DELETE.F", """{"seq":5}"""),
            S("$JS.API.STREAM.MSG.GET.F", """{"seq":1}"""),
            S("$JS.API.STREAM.MSG.GET.F", """{"seq":9}"""),
            S("$JS.API.INFO"),
            S("$JS.API.STREAM.UNKNOWN"),
            S("$JS.API.INFO"),
        ],
        ["create-errors"] =
        [
            S("$JS.API.STREAM.CREATE.A", "{not json"),
            S("$JS.API.STREAM.CREATE.A", """{"name":"B"}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","retention":"forever"}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"disk"}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","max_msgs":"many"}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","sealed":true}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","mirror_direct":true}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","num_replicas":3}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","num_replicas":7}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","num_replicas":-1}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","max_age":1000}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","duplicate_window":-5}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","max_age":1000000000,"duplicate_window":2000000000}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","deny_purge":true,"allow_rollup_hdrs":true}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","discard_new_per_subject":true}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","discard":"new","discard_new_per_subject":true}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a","a"]}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["$JS.API.>"]}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a..b"]}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a.*","a.b"]}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["x"],"mirror":{"name":"M"}}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","republish":{"src":"zzz","dest":"out"}}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["in.>"],"republish":{"src":"in.>","dest":"in.x"}}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","description":"d","max_msg_size":10,"Subjects":["case.insensitive"],"unknown_field":1}"""),
            S("$JS.API.STREAM.CREATE.B", """{"name":"B","subjects":["case.*"]}"""),
            S("$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["other"]}"""),
            S("$JS.API.STREAM.UPDATE.A", """{"name":"A","subjects":["case.insensitive"],"storage":"memory","max_msg_size":10,"description":"d"}"""),
            S("$JS.API.STREAM.UPDATE.A", """{"name":"A","subjects":["case.insensitive"],"retention":"workqueue","max_msg_size":10,"description":"d"}"""),
            S("$JS.API.STREAM.UPDATE.A", """{"name":"B","subjects":["case.insensitive"]}"""),
            S("$JS.API.STREAM.UPDATE.NOPE", """{"name":"NOPE"}"""),
            S("$JS.API.STREAM.UPDATE.A", "{bad"),
            S("$JS.API.STREAM.CREATE.a.b", """{"name":"a.b"}"""),
            S("$JS.API.STREAM.INFO.A", "{bad"),
            S("$JS.API.STREAM.NAMES", "{bad"),
            S("$JS.API.STREAM.PURGE.NOPE"),
            S("$JS.API.STREAM.MSG.DELETE.NOPE", """{"seq":1}"""),
            S("$JS.API.INFO"),
        ],
        ["publish-headers"] =
        [
            S("$JS.API.STREAM.CREATE.KV", """{"name":"KV","subjects":["kv.>"],"max_msgs_per_subject":2,"allow_rollup_hdrs":true,"allow_direct":true,"max_msg_size":64}"""),
            S("kv.a", "1", "Nats-Msg-Id: m1"),
            S("kv.a", "1", "Nats-Msg-Id: m1"),
            S("kv.a", "2", "Nats-Expected-Last-Sequence: 5"),
            S("kv.a", "2", "Nats-Expected-Last-Sequence: 1"),
            S("kv.b", "3", "Nats-Expected-Last-Subject-Sequence: 0"),
            S("kv.b", "4", "Nats-Expected-Last-Subject-Sequence: 0"),
            S("kv.a", "5", "Nats-Expected-Last-Msg-Id: nope"),
            S("kv.a", "5", "Nats-Expected-Last-Msg-Id: m1"),
            S("kv.a", "6", "Nats-Expected-Stream: OTHER"),
            S("kv.a", "6", "Nats-Expected-Stream: KV"),
            S("kv.a", "too large too large too large too large too large too large too large"),
            S("kv.c", "7"),
            S("kv.c", "8", "Nats-Rollup: sub"),
            S("$JS.API.STREAM.INFO.KV", """{"subjects_filter":"kv.*"}"""),
            S("kv.d", "9", "Nats-Rollup: all"),
            S("$JS.API.STREAM.INFO.KV"),
            S("$JS.API.DIRECT.GET.KV", """{"last_by_subj":"kv.d"}"""),
            S("$JS.API.DIRECT.GET.KV", """{"seq":1}"""),
            S("$JS.API.DIRECT.GET.KV", ""),
            S("$JS.API.DIRECT.GET.KV", "{bad"),
            S("$JS.API.DIRECT.GET.KV", """{"seq":1,"last_by_subj":"kv.d"}"""),
            S("$JS.API.DIRECT.GET.KV.kv.d"),
            S("$JS.API.DIRECT.GET.KV", """{"next_by_subj":"kv.>","seq":1}"""),
            S("$JS.API.STREAM.CREATE.NR", """{"name":"NR","subjects":["nr"],"allow_rollup_hdrs":false}"""),
            S("nr", "x", "Nats-Rollup: all"),
        ],
        ["discard-new"] =
        [
            S("$JS.API.STREAM.CREATE.L", """{"name":"L","subjects":["l.>"],"max_msgs":2,"discard":"new","storage":"memory"}"""),
            S("l.1", "a"),
            S("l.2", "b"),
            S("l.3", "c"),
            S("$JS.API.STREAM.INFO.L"),
            S("$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p.>"],"max_msgs_per_subject":1,"discard":"new","discard_new_per_subject":true}"""),
            S("p.1", "a"),
            S("p.1", "b"),
            S("p.2", "c"),
            S("$JS.API.STREAM.CREATE.OLD", """{"name":"OLD","subjects":["o"],"max_msgs":2}"""),
            S("o", "1"),
            S("o", "2"),
            S("o", "3"),
            S("$JS.API.STREAM.INFO.OLD"),
            S("$JS.API.STREAM.UPDATE.OLD", """{"name":"OLD","subjects":["o"],"max_msgs":2,"sealed":true}"""),
            S("o", "4"),
            S("$JS.API.STREAM.PURGE.OLD"),
            S("$JS.API.STREAM.MSG.DELETE.OLD", """{"seq":3}"""),
            S("$JS.API.STREAM.UPDATE.OLD", """{"name":"OLD","subjects":["o"],"max_msgs":2}"""),
        ],
    };

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task SameAnswersAsGo(string scenario)
    {
        var settings = new ServerSettings { JetStream = true };
        var (go, ours) = await TestServers.StartPairAsync(settings);
        await using (go)
        await using (ours)
        {
            var goAnswers = await RunAsync(go, ScenarioSteps[scenario]);
            var ourAnswers = await RunAsync(ours, ScenarioSteps[scenario]);
            var differences = new List<string>();
            for (var i = 0; i < goAnswers.Count; i++)
            {
                if (goAnswers[i] != ourAnswers[i])
                {
                    var step = ScenarioSteps[scenario][i];
                    differences.Add($"step {i} ({step.Subject} {step.Body} {step.Headers}):\n  go:   {goAnswers[i]}\n  ours: {ourAnswers[i]}");
                }
            }
            Assert.True(differences.Count == 0, string.Join("\n", differences));
        }
    }

    /// <summary>With a JetStream domain: the $JS.&lt;domain&gt;.API form, "domain" in answers and PubAcks.</summary>
    [Fact]
    public async Task DomainFormSameAsGo()
    {
        Step[] steps =
        [
            S("$JS.hub.API.INFO"),
            S("$JS.hub.API.STREAM.CREATE.D", """{"name":"D","subjects":["d"]}"""),
            S("d", "x"),
            S("d", "x", "Nats-Msg-Id: 1"),
            S("d", "x", "Nats-Msg-Id: 1"),
            S("$JS.API.STREAM.INFO.D"),
            S("$JS.hub.API.STREAM.NAMES"),
            S("$JS.other.API.STREAM.NAMES"),
        ];
        var settings = new ServerSettings { JetStream = true };
        settings.RawConfig.Add("jetstream { domain: hub }");
        var (go, ours) = await TestServers.StartPairAsync(settings);
        await using (go)
        await using (ours)
        {
            var goAnswers = await RunAsync(go, steps);
            var ourAnswers = await RunAsync(ours, steps);
            var differences = goAnswers.Select((g, i) => (g, o: ourAnswers[i], i)).Where(x => x.g != x.o)
                .Select(x => $"step {x.i} ({steps[x.i].Subject}):\n  go:   {x.g}\n  ours: {x.o}").ToList();
            Assert.True(differences.Count == 0, string.Join("\n", differences));
        }
    }

    private static async Task<List<string>> RunAsync(ITestServer server, Step[] steps)
    {
        await using var requester = await JsRawRequester.ConnectAsync(server.Port);
        var answers = new List<string>();
        foreach (var step in steps)
        {
            try
            {
                answers.Add(await requester.RequestAsync(step.Subject, step.Body, step.Headers));
            }
            catch (Exception e) when (e is OperationCanceledException or IOException or System.Net.Sockets.SocketException)
            {
                answers.Add($"[{e.GetType().Name}]");
                break;
            }
        }
        return answers;
    }
}
