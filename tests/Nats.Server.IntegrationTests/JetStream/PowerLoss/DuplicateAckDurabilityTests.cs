using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.PowerLoss;

/// <summary>
/// A duplicate's PubAck (<c>"duplicate": true</c>) tells the client the original is stored, so it must not
/// leave before the original is durable. The store directory is on <see cref="PowerCutMount"/> with its
/// syncs held: while they are, no PubAck may arrive (neither the original's nor the duplicate's); once
/// they proceed, both arrive, original first, and the message survives a power cut.
/// </summary>
public sealed class DuplicateAckDurabilityTests(ITestOutputHelper output)
{
    private const string Original = "{\"stream\":\"DEDUP\", \"seq\":1}";
    private const string Duplicate = "{\"stream\":\"DEDUP\", \"seq\":1,\"duplicate\": true}";

    [Fact]
    public async Task DuplicateAckWaitsUntilTheOriginalIsDurable()
    {
        await using var mount = await PowerCutMount.StartAsync();
        await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(nats);
            await js.CreateStreamAsync(new StreamConfig("DEDUP", ["dedup.>"]) { DuplicateWindow = TimeSpan.FromMinutes(1) });
            await using var acks = await nats.SubscribeCoreAsync<string>("acks.*");
            await nats.PingAsync();

            await mount.HoldAsync();
            try
            {
                await nats.PublishAsync("dedup.a", "original", headers: new NatsHeaders { ["Nats-Msg-Id"] = "m1" }, replyTo: "acks.original");
                await nats.PublishAsync("dedup.a", "again", headers: new NatsHeaders { ["Nats-Msg-Id"] = "m1" }, replyTo: "acks.duplicate");
                // The server has read both publishes once this PONG arrives; the sync round covering the original is held.
                await nats.PingAsync();
                output.WriteLine($"held sync: {await mount.HeldSyncAsync()}");
                // A PING in a later read: an ack already sent (the publishes' read batch is over) would arrive before its PONG.
                await nats.PingAsync();
                Assert.False(acks.Msgs.TryRead(out var early), $"a PubAck arrived while the original was not durable: {early.Subject} {early.Data}");
            }
            finally
            {
                // Also when an assertion failed: a process blocked in a held sync cannot be killed.
                await mount.ReleaseAsync();
            }
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            var first = await acks.Msgs.ReadAsync(timeout.Token);
            var second = await acks.Msgs.ReadAsync(timeout.Token);
            Assert.Equal(("acks.original", Original), (first.Subject, first.Data));
            Assert.Equal(("acks.duplicate", Duplicate), (second.Subject, second.Data));
            await server.KillAsync();
        }

        await mount.CutAsync();
        await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(nats);
            var stream = await js.GetStreamAsync("DEDUP");
            var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 });
            Assert.Equal("original", System.Text.Encoding.UTF8.GetString(message.Message.Data.Span));
            // The duplicate window was rebuilt from the store: a third copy is still a duplicate of 1.
            var again = await js.PublishAsync("dedup.a", "third", opts: new NatsJSPubOpts { MsgId = "m1" });
            Assert.True(again.Duplicate);
            Assert.Equal(1UL, again.Seq);
        }
    }
}
