using Nats.Server.IntegrationTests.Core;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// Stream <c>republish</c>: the same streams, publishes and invalid configs sent to Go 2.9.10 and to ours;
/// the republished messages a raw subscriber receives (HMSG lines, header blocks with Nats-Stream,
/// Nats-Subject, Nats-Sequence, Nats-Last-Sequence, Nats-Msg-Size, payloads) and the API answers must be
/// the same bytes. Then a NATS.Net subscriber reads the headers from ours.
/// </summary>
public sealed class RepublishTests
{
    private static readonly (string Subject, string Body, string? Headers)[] Steps =
    [
        ("$JS.API.STREAM.CREATE.R1", """{"name":"R1","subjects":["r1.>"],"republish":{"src":"r1.*","dest":"rp1.{{wildcard(1)}}"}}""", null),
        ("$JS.API.STREAM.CREATE.R2", """{"name":"R2","subjects":["r2.>"],"republish":{"dest":"rp2.>","headers_only":true}}""", null),
        ("$JS.API.STREAM.CREATE.C", """{"name":"C","subjects":["c.>"],"republish":{"src":">","dest":"c.x"}}""", null),
        ("$JS.API.STREAM.CREATE.N", """{"name":"N","subjects":["a.>"],"republish":{"src":"b.>","dest":"x.>"}}""", null),
        ("$JS.API.STREAM.CREATE.T", """{"name":"T","subjects":["d.*"],"republish":{"src":"d.*","dest":"z.*"}}""", null),
        ("$JS.API.STREAM.CREATE.W", """{"name":"W","subjects":["e.>"],"republish":{"src":"e.>","dest":"z"}}""", null),
        ("$JS.API.STREAM.UPDATE.R1", """{"name":"R1","subjects":["r1.>"],"republish":{"src":"r1.*","dest":"other.{{wildcard(1)}}"}}""", null),
        ("$JS.API.STREAM.UPDATE.R1", """{"name":"R1","subjects":["r1.>"]}""", null),
        ("r1.a", "one", null),
        ("r1.a", "two", "X-Test: 1"),
        ("r1.b.c", "not republished", null),
        ("r1.b", "three", "Nats-Msg-Id: m1"),
        ("r1.a", "four", null),
        ("r2.x", "payload only as size", null),
        ("r2.y.z", "", "X-Empty: yes"),
        ("$JS.API.STREAM.INFO.R2", "", null),
    ];

    [Fact]
    public async Task RepublishedMessagesAndErrorsSameAsGo()
    {
        var (go, ours) = await TestServers.StartPairAsync(new ServerSettings { JetStream = true });
        await using (go)
        await using (ours)
        {
            var (goAnswers, goReceived) = await RunAsync(go);
            var (ourAnswers, ourReceived) = await RunAsync(ours);
            for (var i = 0; i < Steps.Length; i++)
            {
                Assert.True(goAnswers[i] == ourAnswers[i], $"step {i} {Steps[i].Subject} {Steps[i].Body}:\n  go:   {goAnswers[i]}\n  ours: {ourAnswers[i]}");
            }
            Assert.Contains("Nats-Msg-Size: 20", goReceived, StringComparison.Ordinal);
            Assert.Equal(goReceived, ourReceived);
        }
    }

    private static async Task<(List<string> Answers, string Received)> RunAsync(ITestServer server)
    {
        await using var subscriber = await RawClient.ConnectAsync(server.Port);
        await subscriber.ConnectAndReadInfoAsync("{\"verbose\":false,\"headers\":true}");
        await subscriber.SendAsync("SUB rp1.> 1\r\nSUB rp2.> 2\r\nSUB other.> 3\r\n");
        await subscriber.SyncAsync();
        await using var requester = await JsRawRequester.ConnectAsync(server.Port);
        var answers = new List<string>();
        foreach (var (subject, body, headers) in Steps)
        {
            answers.Add(JsonMask(await requester.RequestAsync(subject, body, headers)));
        }
        // Every republish was queued before its PubAck, so a PING answered on the subscriber comes after them.
        return (answers, await subscriber.SyncAsync());
    }

    private static string JsonMask(string text) =>
        System.Text.RegularExpressions.Regex.Replace(text, @"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>");

    [Fact]
    public async Task NatsNetSubscriberReadsRepublishHeaders()
    {
        await using var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true });
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}" });
        var js = new NatsJSContext(nats);
        await js.CreateStreamAsync(new StreamConfig("ORD", ["ord.>"]) { Republish = new Republish { Src = "ord.>", Dest = "watch.ord.>" } });
        await using var sub = await nats.SubscribeCoreAsync<string>("watch.ord.>");
        await nats.PingAsync();
        (await js.PublishAsync("ord.eu.1", "first")).EnsureSuccess();
        (await js.PublishAsync("ord.eu.1", "second")).EnsureSuccess();
        var messages = new List<NatsMsg<string>>();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
        {
            messages.Add(msg);
            if (messages.Count == 2)
            {
                break;
            }
        }
        Assert.Equal(["watch.ord.eu.1", "watch.ord.eu.1"], messages.Select(m => m.Subject));
        Assert.Equal(["first", "second"], messages.Select(m => m.Data));
        var last = messages[1].Headers!;
        Assert.Equal("ORD", last["Nats-Stream"].ToString());
        Assert.Equal("ord.eu.1", last["Nats-Subject"].ToString());
        Assert.Equal("2", last["Nats-Sequence"].ToString());
        Assert.Equal("1", last["Nats-Last-Sequence"].ToString());
    }
}
