using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// The same consumer API requests and pull requests, valid and invalid, sent to Go 2.9.10
/// (<c>nats-server -js -sd tmp</c>) and to ours; every answer (JSON, or the status/message of a pull)
/// must be byte-identical after times and ids are masked.
/// </summary>
public sealed partial class ConsumerApiDifferentialTests
{
    public sealed record Step(string Subject, string Body, string? Headers = null);

    private static Step S(string subject, string body = "", string? headers = null) => new(subject, body, headers);

    private static Step Create(string subject, string config) => S(subject, $$"""{"stream_name":"S","config":{{config}}}""");

    public static TheoryData<string> Scenarios => new(ScenarioSteps.Keys);

    private static readonly Dictionary<string, Step[]> ScenarioSteps = new()
    {
        ["consumer-lifecycle"] =
        [
            S("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"]}"""),
            S("s.a", "1"),
            S("s.b", "2"),
            S("s.a", "3"),
            Create("$JS.API.CONSUMER.CREATE.S.D", """{"durable_name":"D","ack_policy":"explicit"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.D", """{"durable_name":"D","ack_policy":"explicit"}"""),
            Create("$JS.API.CONSUMER.DURABLE.CREATE.S.D2", """{"durable_name":"D2","ack_policy":"explicit","filter_subject":"s.a","deliver_policy":"last"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.F.s.a", """{"ack_policy":"all","filter_subject":"s.a","deliver_policy":"by_start_sequence","opt_start_seq":2}"""),
            Create("$JS.API.CONSUMER.CREATE.S.G.x", """{"ack_policy":"none","filter_subject":"s.b","max_deliver":3,"description":"seven tokens: Go does not check the filter"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.LPS", """{"ack_policy":"explicit","filter_subject":"s.>","deliver_policy":"last_per_subject","backoff":[1000000000,2000000000],"max_deliver":5}"""),
            Create("$JS.API.CONSUMER.CREATE.S.NEW", """{"ack_policy":"explicit","deliver_policy":"new","max_batch":2,"max_expires":2000000000,"max_bytes":100,"max_waiting":3,"sample_freq":"50%","headers_only":true}"""),
            S("$JS.API.CONSUMER.INFO.S.D"),
            S("$JS.API.CONSUMER.INFO.S.LPS"),
            S("$JS.API.CONSUMER.NAMES.S"),
            S("$JS.API.CONSUMER.NAMES.S", """{"offset":2}"""),
            S("$JS.API.CONSUMER.LIST.S"),
            S("$JS.API.CONSUMER.MSG.NEXT.S.D"),
            S("$JS.API.CONSUMER.MSG.NEXT.S.D", """{"batch":1,"no_wait":true}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.D2", "1"),
            S("$JS.API.CONSUMER.MSG.NEXT.S.LPS", """{"batch":1}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"no_wait":true}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"batch":5}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"expires":5000000000}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"max_bytes":500}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"expires":300000000}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", """{"expires":1000000000,"idle_heartbeat":800000000}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.NEW", "{bad"),
            S("$JS.API.CONSUMER.INFO.S.D"),
            S("$JS.API.CONSUMER.INFO.S.D2"),
            S("$JS.API.CONSUMER.DELETE.S.D2"),
            S("$JS.API.CONSUMER.DELETE.S.D2"),
            S("$JS.API.CONSUMER.INFO.S.NOPE"),
            S("$JS.API.CONSUMER.INFO.NOPE.D"),
            S("$JS.API.CONSUMER.NAMES.NOPE"),
            S("$JS.API.CONSUMER.LIST.S", "{bad"),
            S("$JS.API.STREAM.INFO.S"),
            S("$JS.API.INFO"),
        ],
        ["consumer-errors"] =
        [
            S("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"]}"""),
            S("$JS.API.CONSUMER.CREATE.S", "{bad"),
            S("$JS.API.CONSUMER.CREATE.S", """{"stream_name":"X","config":{}}"""),
            S("$JS.API.CONSUMER.CREATE.NOPE", """{"stream_name":"NOPE","config":{}}"""),
            Create("$JS.API.CONSUMER.DURABLE.CREATE.S.D", "{}"),
            Create("$JS.API.CONSUMER.DURABLE.CREATE.S.D", """{"durable_name":"E"}"""),
            Create("$JS.API.CONSUMER.DURABLE.CREATE.S.D", """{"durable_name":"D","name":"X"}"""),
            Create("$JS.API.CONSUMER.CREATE.S", """{"durable_name":"E"}"""),
            Create("$JS.API.CONSUMER.CREATE.S", """{"name":"a*b"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"durable_name":"E"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N.s.x.y", """{"filter_subject":"s.a"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"num_replicas":3}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"num_replicas":-1}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"ack_policy":"explicit","backoff":[1000000000,2000000000],"max_deliver":2}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"a.*"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"s.x"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"d","max_waiting":5}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"d","max_ack_pending":5}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"d","idle_heartbeat":1000}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_subject":"d","flow_control":true}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"rate_limit_bps":100}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"max_waiting":-1}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"idle_heartbeat":1000000000}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"flow_control":true}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"max_batch":-1}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"max_expires":1000}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"filter_subject":"other.>"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"opt_start_seq":5}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"last","opt_start_time":"2024-01-01T00:00:00Z"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"last_per_subject"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"new","opt_start_seq":1}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"by_start_sequence"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"by_start_time"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"by_start_time","opt_start_time":"2024-01-01T00:00:00Z","opt_start_seq":2}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"deliver_policy":"sometimes"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"ack_policy":"maybe"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"sample_freq":"abc"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"sample_freq":"-5%"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.N", """{"max_ack_pending":5,"ack_policy":"explicit","direct":true}"""),
            Create("$JS.API.CONSUMER.CREATE.S.P", """{"deliver_subject":"dlv","ack_policy":"explicit"}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.P"),
            Create("$JS.API.CONSUMER.CREATE.S.P", """{"deliver_subject":"dlv","ack_policy":"none"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.P", """{"ack_policy":"explicit"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.P", """{"deliver_subject":"dlv2","ack_policy":"explicit","description":"moved"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.Q", """{"ack_policy":"explicit"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.Q", """{"ack_policy":"explicit","deliver_policy":"new"}"""),
            Create("$JS.API.CONSUMER.CREATE.S.Q", """{"ack_policy":"explicit","max_waiting":10}"""),
            Create("$JS.API.CONSUMER.CREATE.S.Q", """{"ack_policy":"explicit","max_ack_pending":10,"description":"updated"}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.Q", """{"no_wait":true}"""),
            S("$JS.API.CONSUMER.MSG.NEXT.S.Q", """{"batch":2,"expires":400000000}"""),
            S("$JS.API.CONSUMER.INFO.S.Q"),
        ],
        ["workqueue"] =
        [
            S("$JS.API.STREAM.CREATE.W", """{"name":"W","subjects":["w.>"],"retention":"workqueue"}"""),
            S("$JS.API.CONSUMER.CREATE.W.A", """{"stream_name":"W","config":{"ack_policy":"none"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.A", """{"stream_name":"W","config":{"ack_policy":"all"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.A", """{"stream_name":"W","config":{"ack_policy":"explicit","deliver_policy":"new"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.A", """{"stream_name":"W","config":{"ack_policy":"explicit","filter_subject":"w.a.>"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.B", """{"stream_name":"W","config":{"ack_policy":"explicit"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.B", """{"stream_name":"W","config":{"ack_policy":"explicit","filter_subject":"w.a.b"}}"""),
            S("$JS.API.CONSUMER.CREATE.W.B", """{"stream_name":"W","config":{"ack_policy":"explicit","filter_subject":"w.b"}}"""),
            S("w.b", "job"),
            S("$JS.API.CONSUMER.MSG.NEXT.W.B"),
            S("$JS.API.STREAM.INFO.W"),
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
            for (var i = 0; i < Math.Max(goAnswers.Count, ourAnswers.Count); i++)
            {
                var g = i < goAnswers.Count ? goAnswers[i] : "<none>";
                var o = i < ourAnswers.Count ? ourAnswers[i] : "<none>";
                if (g != o)
                {
                    var step = ScenarioSteps[scenario][i];
                    differences.Add($"step {i} ({step.Subject} {step.Body}):\n  go:   {g}\n  ours: {o}");
                }
            }
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
                answers.Add(LastActive().Replace(await requester.RequestAsync(step.Subject, step.Body, step.Headers), "\"last_active\":\"<time>\""));
            }
            catch (Exception e) when (e is OperationCanceledException or IOException or System.Net.Sockets.SocketException)
            {
                answers.Add($"[{e.GetType().Name}]");
                break;
            }
        }
        return answers;
    }

    [GeneratedRegex("\"last_active\":\"[^\"]*\"")]
    private static partial Regex LastActive();
}
