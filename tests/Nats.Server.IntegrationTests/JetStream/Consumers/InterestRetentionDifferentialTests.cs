using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// An interest stream with overlapping consumers, driven by the same NATS.Net program on Go 2.9.10 and
/// ours: acks, a consumer's filter changed, consumers deleted. After each step the stream's state
/// (STREAM.INFO with times masked) and the remaining messages must be the same on both.
/// </summary>
public sealed class InterestRetentionDifferentialTests
{
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task StreamStateAfterAcksFilterChangeAndDeletesMatchesGo()
    {
        var (go, ours) = await TestServers.StartPairAsync(new ServerSettings { JetStream = true });
        await using (go)
        await using (ours)
        {
            var expected = await RunAsync(go);
            var actual = await RunAsync(ours);
            Assert.Equal(string.Join("\n", expected), string.Join("\n", actual));
        }
    }

    [Fact]
    public async Task ConsumersStartingLaterHoldOlderMessagesAsInGo()
    {
        var (go, ours) = await TestServers.StartPairAsync(new ServerSettings { JetStream = true });
        await using (go)
        await using (ours)
        {
            var expected = await RunLateStartAsync(go);
            var actual = await RunLateStartAsync(ours);
            Assert.Equal(string.Join("\n", expected), string.Join("\n", actual));
        }
    }

    /// <summary>Consumers created after messages were stored, with each ack policy, then the early consumer acknowledges everything.</summary>
    private static async Task<List<string>> RunLateStartAsync(ITestServer server)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await nats.ConnectAsync();
        var js = new NatsJSContext(nats);
        using var cts = new CancellationTokenSource(Long);
        var token = cts.Token;
        var transcript = new List<string>();
        async Task Snapshot(string step)
        {
            var info = await nats.RequestAsync<byte[], byte[]>("$JS.API.STREAM.INFO.L", [], cancellationToken: token);
            transcript.Add($"{step}: {JsRawRequester.Normalise(Encoding.UTF8.GetString(info.Data!))}");
        }

        await js.CreateStreamAsync(new StreamConfig("L", ["l.>"]) { Retention = StreamConfigRetention.Interest }, token);
        var x = await js.CreateOrUpdateConsumerAsync("L", new ConsumerConfig("X") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, token);
        for (var i = 0; i < 3; i++)
        {
            (await js.PublishAsync("l.a", $"m{i}", cancellationToken: token)).EnsureSuccess();
        }
        await js.CreateOrUpdateConsumerAsync("L", new ConsumerConfig("ALL") { AckPolicy = ConsumerConfigAckPolicy.All, DeliverPolicy = ConsumerConfigDeliverPolicy.New }, token);
        await js.CreateOrUpdateConsumerAsync("L", new ConsumerConfig("NONE") { AckPolicy = ConsumerConfigAckPolicy.None, DeliverPolicy = ConsumerConfigDeliverPolicy.New }, token);
        await js.CreateOrUpdateConsumerAsync("L", new ConsumerConfig("EXP") { AckPolicy = ConsumerConfigAckPolicy.Explicit, DeliverPolicy = ConsumerConfigDeliverPolicy.New }, token);
        await foreach (var msg in x.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(10) }, cancellationToken: token))
        {
            await msg.AckAsync(new AckOpts { DoubleAck = true }, token);
        }
        await Snapshot("X acked all");
        // Go holds what lies above an ack floor of 0 for ack none/all (needAck is seq > floor): each is deleted in turn.
        foreach (var name in (string[])["NONE", "ALL", "EXP", "X"])
        {
            await js.DeleteConsumerAsync("L", name, token);
            await Snapshot($"{name} deleted");
        }
        return transcript;
    }

    private static async Task<List<string>> RunAsync(ITestServer server)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await nats.ConnectAsync();
        var js = new NatsJSContext(nats);
        using var cts = new CancellationTokenSource(Long);
        var token = cts.Token;
        var doubleAck = new AckOpts { DoubleAck = true };
        var transcript = new List<string>();

        async Task Snapshot(string step)
        {
            var info = await nats.RequestAsync<byte[], byte[]>("$JS.API.STREAM.INFO.I", [], cancellationToken: token);
            var left = new List<string>();
            var state = (await js.GetStreamAsync("I", cancellationToken: token)).Info.State;
            for (var seq = state.FirstSeq; state.Messages > 0 && seq <= state.LastSeq; seq++)
            {
                try
                {
                    var msg = await js.GetStreamAsync("I", cancellationToken: token);
                    var got = await msg.GetAsync(new StreamMsgGetRequest { Seq = seq }, token);
                    left.Add($"{seq}:{got.Message.Subject}");
                }
                catch (NatsJSApiException e) when (e.Error.ErrCode == 10037)
                {
                    // Removed: not listed.
                }
            }
            transcript.Add($"{step}: {JsRawRequester.Normalise(Encoding.UTF8.GetString(info.Data!))} left [{string.Join(" ", left)}]");
        }

        await js.CreateStreamAsync(new StreamConfig("I", ["i.>"]) { Retention = StreamConfigRetention.Interest }, token);
        var a = await js.CreateOrUpdateConsumerAsync("I", new ConsumerConfig("A") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "i.a" }, token);
        var b = await js.CreateOrUpdateConsumerAsync("I", new ConsumerConfig("B") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, token);
        await js.CreateOrUpdateConsumerAsync("I", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "i.b" }, token);
        await js.CreateOrUpdateConsumerAsync("I", new ConsumerConfig("N") { AckPolicy = ConsumerConfigAckPolicy.None, FilterSubject = "i.c" }, token);
        foreach (var subject in (string[])["i.a", "i.b", "i.c", "i.a", "i.b", "i.c", "i.a", "i.d"])
        {
            (await js.PublishAsync(subject, subject, cancellationToken: token)).EnsureSuccess();
        }
        await Snapshot("published");

        // B acknowledges everything: what only B wanted (i.d) goes, the rest is still wanted.
        await foreach (var msg in b.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 8, Expires = TimeSpan.FromSeconds(10) }, cancellationToken: token))
        {
            await msg.AckAsync(doubleAck, token);
        }
        await Snapshot("B acked all");

        // A acknowledges the first i.a only.
        var firstA = await a.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(10) }, cancellationToken: token);
        await firstA!.AckAsync(doubleAck, token);
        await Snapshot("A acked one");

        // C goes: nobody else wants i.b any more.
        await js.DeleteConsumerAsync("I", "C", token);
        await Snapshot("C deleted");

        // A's filter widens to i.> (2.9.10 allows the change and does not re-check retention).
        await js.CreateOrUpdateConsumerAsync("I", new ConsumerConfig("A") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "i.>" }, token);
        await Snapshot("A filter changed");

        // N (ack none, never delivered to: no deliver subject interest) goes.
        await js.DeleteConsumerAsync("I", "N", token);
        await Snapshot("N deleted");

        await js.DeleteConsumerAsync("I", "A", token);
        await Snapshot("A deleted");
        await js.DeleteConsumerAsync("I", "B", token);
        await Snapshot("B deleted");
        return transcript;
    }
}
