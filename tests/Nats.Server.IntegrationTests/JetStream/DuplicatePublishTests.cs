using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// Publishes carrying a Nats-Msg-Id the stream already holds, sent while the original may still be
/// waiting for its sync round (not awaited one by one): Go 2.9.10 and ours answer alike, every copy
/// with the original's sequence and all but the original with <c>"duplicate": true</c>, exactly Go's text.
/// </summary>
public sealed class DuplicatePublishTests
{
    [Fact]
    public async Task InFlightDuplicatesAreAnsweredLikeGo()
    {
        var (go, ours) = await TestServers.StartPairAsync(new ServerSettings { JetStream = true });
        await using (go)
        await using (ours)
        {
            var expected = await RunAsync(go);
            var actual = await RunAsync(ours);
            Assert.Equal(expected, actual);
        }
    }

    private static async Task<string[]> RunAsync(ITestServer server)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
        var js = new NatsJSContext(nats);
        await js.CreateStreamAsync(new StreamConfig("DUP", ["dup.>"]));

        // NATS.Net's JetStream publish, three copies in flight at once.
        var copies = await Task.WhenAll(Enumerable.Range(0, 3)
            .Select(i => js.PublishAsync("dup.a", $"copy {i}", opts: new NatsJSPubOpts { MsgId = "same" }).AsTask()));
        Assert.All(copies, ack => Assert.Equal((ulong)1, ack.Seq));
        Assert.All(copies, ack => Assert.Equal("DUP", ack.Stream));
        Assert.Single(copies, ack => !ack.Duplicate);

        // The raw answers of two pipelined copies, in arrival order.
        await using var acks = await nats.SubscribeCoreAsync<string>("acks.*");
        await nats.PingAsync();
        await nats.PublishAsync("dup.b", "one", headers: new NatsHeaders { ["Nats-Msg-Id"] = "raw" }, replyTo: "acks.1");
        await nats.PublishAsync("dup.b", "two", headers: new NatsHeaders { ["Nats-Msg-Id"] = "raw" }, replyTo: "acks.2");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var first = await acks.Msgs.ReadAsync(timeout.Token);
        var second = await acks.Msgs.ReadAsync(timeout.Token);

        var stream = await js.GetStreamAsync("DUP");
        Assert.Equal(2, stream.Info.State.Messages);
        return [$"{first.Subject} {first.Data}", $"{second.Subject} {second.Data}"];
    }
}
