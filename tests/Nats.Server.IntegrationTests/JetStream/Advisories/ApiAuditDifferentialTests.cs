using System.Text;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.JetStream.Advisories;

/// <summary>
/// Go's API audit advisory (<c>$JS.EVENT.ADVISORY.API</c>, <c>io.nats.jetstream.advisory.v1.api_audit</c>):
/// the same requests (valid, invalid, unanswered) from a NATS.Net subscriber's connection to Go 2.9.10 and
/// to ours; the advisories must be byte-identical once ids, times, server ids and RTTs are masked.
/// </summary>
public sealed partial class ApiAuditDifferentialTests
{
    private static readonly (string Subject, string Body, bool Reply)[] Requests =
    [
        ("$JS.API.INFO", "", true),
        ("$JS.API.STREAM.CREATE.AUD", """{"name":"AUD","subjects":["aud.>"],"description":"quotes \" & <tags>"}""", true),
        ("$JS.API.STREAM.CREATE.AUD", "{not json", true),
        ("$JS.API.STREAM.INFO.NOPE", "", true),
        ("$JS.API.STREAM.NAMES", "", false),
        ("$JS.API.STREAM.UPDATE.AUD", """{"name":"AUD","subjects":["aud.>","more"]}""", true),
        ("$JS.API.STREAM.MSG.GET.AUD", """{"seq":7}""", true),
        ("$JS.API.STREAM.PURGE.AUD", "", true),
        ("$JS.API.STREAM.DELETE.AUD", "", true),
        ("$JS.API.INFO", "", true),
    ];

    [Fact]
    public async Task AuditAdvisoriesSameAsGo()
    {
        var settings = new ServerSettings { JetStream = true };
        var (go, ours) = await TestServers.StartPairAsync(settings);
        await using (go)
        await using (ours)
        {
            var goAudits = await RunAsync(go);
            var ourAudits = await RunAsync(ours);
            Assert.Equal(Requests.Length, goAudits.Count);
            Assert.Equal(goAudits, ourAudits);
        }
    }

    private static async Task<List<string>> RunAsync(ITestServer server)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(10) });
        await nats.ConnectAsync();
        var audits = new List<string>();
        var all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("$JS.EVENT.ADVISORY.API");
        var reader = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                audits.Add(Mask(Encoding.UTF8.GetString(msg.Data ?? [])));
                if (audits.Count == Requests.Length)
                {
                    all.TrySetResult();
                }
            }
        });
        await nats.PingAsync();
        foreach (var (subject, body, reply) in Requests)
        {
            var bytes = Encoding.UTF8.GetBytes(body);
            if (reply)
            {
                await nats.RequestAsync<byte[], byte[]>(subject, bytes);
            }
            else
            {
                await nats.PublishAsync(subject, bytes);
                await nats.PingAsync();
            }
        }
        await all.Task.WaitAsync(TimeSpan.FromSeconds(30));
        return audits;
    }

    private static string Mask(string json)
    {
        json = Timestamp().Replace(json, "<time>");
        json = ServerId().Replace(json, "<server>");
        json = Rtt().Replace(json, "");
        return EventId().Replace(json, "\"id\":\"<id>\"");
    }

    [GeneratedRegex(@"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")]
    private static partial Regex Timestamp();

    [GeneratedRegex(@"N[A-Z0-9]{55}")]
    private static partial Regex ServerId();

    [GeneratedRegex(@"""rtt"":\d+,")]
    private static partial Regex Rtt();

    [GeneratedRegex(@"""id"":""[A-Za-z0-9]{22}""")]
    private static partial Regex EventId();
}
