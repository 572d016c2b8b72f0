using System.Text;
using System.Text.RegularExpressions;
using System.Threading.Channels;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// The same NATS.Net program against Go 2.9.10 and ours, recording every consumer advisory and
/// ack metric (<c>$JS.EVENT.ADVISORY.CONSUMER.&gt;</c>, <c>$JS.EVENT.METRIC.&gt;</c>) in arrival order:
/// created, nak, max deliveries, terminated, deleted, and sample_freq's consumer_ack metrics. Ids,
/// times and ack_time are masked; everything else (subjects, field order, values) must be identical.
/// </summary>
public sealed partial class ConsumerAdvisoryDifferentialTests
{
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AdvisoriesAndAckMetricsMatchGo()
    {
        var (go, ours) = await TestServers.StartPairAsync(new ServerSettings { JetStream = true });
        await using (go)
        await using (ours)
        {
            var expected = await RunAsync(go);
            var actual = await RunAsync(ours);
            // The scenario must produce every kind on Go, or the comparison proves little.
            foreach (var kind in (string[])["consumer_action", "metric.v1.consumer_ack", "advisory.v1.nak", "max_deliver", "terminated"])
            {
                Assert.Contains(expected, e => e.Contains(kind, StringComparison.Ordinal));
            }
            // sample_freq "0" samples nothing, "100%" every explicit ack (m1, m4; not the +TERM of m3).
            Assert.Equal(2, expected.Count(e => e.StartsWith("$JS.EVENT.METRIC.CONSUMER.ACK.S.D ", StringComparison.Ordinal)));
            Assert.DoesNotContain(expected, e => e.StartsWith("$JS.EVENT.METRIC.CONSUMER.ACK.S.Z", StringComparison.Ordinal));
            Assert.Equal(string.Join("\n", expected), string.Join("\n", actual));
        }
    }

    private static async Task<List<string>> RunAsync(ITestServer server)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await nats.ConnectAsync();
        var js = new NatsJSContext(nats);
        var events = Channel.CreateUnbounded<string>();
        using var cts = new CancellationTokenSource(Long);
        // One subscription: two would each have their own queue, and their interleaving would not be the servers'.
        await using var all = await nats.SubscribeCoreAsync<byte[]>("$JS.EVENT.>", cancellationToken: cts.Token);
        var pump = Pump(all, events.Writer, cts.Token);
        await nats.PingAsync(cts.Token);

        var doubleAck = new AckOpts { DoubleAck = true };
        await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]), cts.Token);
        for (var i = 1; i <= 4; i++)
        {
            (await js.PublishAsync("s.a", $"m{i}", cancellationToken: cts.Token)).EnsureSuccess();
        }
        var d = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("D")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            MaxDeliver = 2,
            SampleFreq = "100%",
        }, cts.Token);
        var transcript = new List<string>();

        await (await NextAsync(d, cts.Token)).AckAsync(doubleAck, cts.Token);
        var m2 = await NextAsync(d, cts.Token);
        await m2.NakAsync(doubleAck, cancellationToken: cts.Token);
        var m2Again = await NextAsync(d, cts.Token);
        await m2Again.NakAsync(doubleAck, cancellationToken: cts.Token);
        // m2 is past max_deliver now: the next pull skips it (max deliveries advisory) and gets m3.
        var m3 = await NextAsync(d, cts.Token);
        transcript.Add($"after max deliver: {m3.Data} delivered {m3.Metadata!.Value.NumDelivered}");
        await m3.AckTerminateAsync(doubleAck, cts.Token);
        var m4 = await NextAsync(d, cts.Token);
        await m4.AckAsync(doubleAck, cts.Token);

        var z = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("Z")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            SampleFreq = "0",
        }, cts.Token);
        await (await NextAsync(z, cts.Token)).AckAsync(doubleAck, cts.Token);

        var info = await nats.RequestAsync<byte[], byte[]>("$JS.API.CONSUMER.INFO.S.D", [], cancellationToken: cts.Token);
        transcript.Add("info D: " + Mask(Encoding.UTF8.GetString(info.Data!)));
        await js.DeleteConsumerAsync("S", "D", cts.Token);
        await js.DeleteConsumerAsync("S", "Z", cts.Token);

        // Consumer advisories leave in order (Go: one queue per stream); Z's deletion is the last one.
        await foreach (var e in events.Reader.ReadAllAsync(cts.Token))
        {
            transcript.Add(e);
            if (e.StartsWith("$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.Z ", StringComparison.Ordinal))
            {
                break;
            }
        }
        await cts.CancelAsync();
        await pump.ContinueWith(_ => { }, TaskScheduler.Default);
        return transcript;
    }

    private static async Task<INatsJSMsg<string>> NextAsync(INatsJSConsumer consumer, CancellationToken token) =>
        await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(10) }, cancellationToken: token)
        ?? throw new InvalidOperationException("no message");

    private static async Task Pump(INatsSub<byte[]> sub, ChannelWriter<string> events, CancellationToken token)
    {
        await foreach (var msg in sub.Msgs.ReadAllAsync(token))
        {
            if (!msg.Subject.StartsWith("$JS.EVENT.ADVISORY.CONSUMER.", StringComparison.Ordinal) && !msg.Subject.StartsWith("$JS.EVENT.METRIC.", StringComparison.Ordinal))
            {
                continue;
            }
            events.TryWrite($"{msg.Subject} {Mask(Encoding.UTF8.GetString(msg.Data ?? []))}");
        }
    }

    private static string Mask(string json) =>
        LastActive().Replace(AckTime().Replace(JsRawRequester.Normalise(json), "\"ack_time\":<ns>"), "\"$1\":\"<time>\"");

    [GeneratedRegex("\"ack_time\":[0-9]+")]
    private static partial Regex AckTime();

    [GeneratedRegex("\"(last_active)\":\"[^\"]*\"")]
    private static partial Regex LastActive();
}
