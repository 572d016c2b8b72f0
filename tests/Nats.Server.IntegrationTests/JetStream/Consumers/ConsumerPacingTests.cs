using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// replay_policy original and rate_limit_bps with NATS.Net, on ours and on Go 2.9.10 (which validates
/// the bounds). Only lower bounds are asserted, each derived from what the server must wait for:
/// the stored timestamps' gaps, or the bytes beyond the token bucket's burst at the configured rate.
/// A server that ignores the setting delivers in milliseconds and fails; a busy machine only makes
/// the elapsed time longer.
/// </summary>
public sealed class ConsumerPacingTests
{
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(60);

    public static TheoryData<string> Servers => new("ours", "go");

    private static async Task<(ITestServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync(string kind)
    {
        var settings = new ServerSettings { JetStream = true };
        var server = kind == "go" ? await TestServers.StartGoAsync(settings) : await TestServers.StartOursAsync(settings);
        var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await connection.ConnectAsync();
        return (server, connection, new NatsJSContext(connection));
    }

    /// <summary>Publishes with pauses between messages, so the stored timestamps have gaps to replay.</summary>
    private static async Task PublishWithGapsAsync(NatsJSContext js, string subject, int count, TimeSpan gap)
    {
        for (var i = 0; i < count; i++)
        {
            if (i > 0)
            {
                await Task.Delay(gap);
            }
            (await js.PublishAsync(subject, $"m{i}")).EnsureSuccess();
        }
    }

    /// <summary>What Go's loopAndGatherMsgs waits in all: each gap above a millisecond between consecutive stored timestamps.</summary>
    private static TimeSpan ReplayBound(IEnumerable<DateTimeOffset> stamps)
    {
        var total = TimeSpan.Zero;
        DateTimeOffset? previous = null;
        foreach (var stamp in stamps)
        {
            if (previous is { } p && stamp - p > TimeSpan.FromMilliseconds(1))
            {
                total += stamp - p;
            }
            previous = stamp;
        }
        // The metadata's timestamps are rounded to 100 ns ticks: allow for that, nothing more.
        return total - TimeSpan.FromMilliseconds(1);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task PushReplayOriginalKeepsTheStoredGaps(string kind)
    {
        var (server, nats, js) = await StartAsync(kind);
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("REPLAY", ["replay.>"]));
            await PublishWithGapsAsync(js, "replay.a", 4, TimeSpan.FromMilliseconds(300));
            await using var sub = await nats.SubscribeCoreAsync<string>("deliver.replay");
            var clock = Stopwatch.StartNew();
            await js.CreateOrUpdateConsumerAsync("REPLAY", new ConsumerConfig("r")
            {
                DeliverSubject = "deliver.replay",
                AckPolicy = ConsumerConfigAckPolicy.None,
                ReplayPolicy = ConsumerConfigReplayPolicy.Original,
            });
            var stamps = new List<DateTimeOffset>();
            var got = new List<string>();
            using var cts = new CancellationTokenSource(Long);
            await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
            {
                got.Add(msg.Data!);
                stamps.Add(Timestamp(msg.ReplyTo!));
                if (got.Count == 4)
                {
                    break;
                }
            }
            var elapsed = clock.Elapsed;
            Assert.Equal(["m0", "m1", "m2", "m3"], got);
            var bound = ReplayBound(stamps);
            Assert.True(bound >= TimeSpan.FromMilliseconds(850), $"the publisher's pauses should show in the stored timestamps ({bound})");
            Assert.True(elapsed >= bound, $"replay original delivered 4 messages in {elapsed}, the stored gaps add up to {bound}");
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task PullReplayOriginalKeepsTheStoredGaps(string kind)
    {
        var (server, nats, js) = await StartAsync(kind);
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("REPLAYP", ["replayp.>"]));
            await PublishWithGapsAsync(js, "replayp.a", 3, TimeSpan.FromMilliseconds(400));
            var consumer = await js.CreateOrUpdateConsumerAsync("REPLAYP", new ConsumerConfig("p")
            {
                AckPolicy = ConsumerConfigAckPolicy.Explicit,
                ReplayPolicy = ConsumerConfigReplayPolicy.Original,
            });
            var clock = Stopwatch.StartNew();
            var stamps = new List<DateTimeOffset>();
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(30) }))
            {
                stamps.Add(msg.Metadata!.Value.Timestamp);
                await msg.AckAsync();
            }
            var elapsed = clock.Elapsed;
            Assert.Equal(3, stamps.Count);
            var bound = ReplayBound(stamps);
            Assert.True(bound >= TimeSpan.FromMilliseconds(750), $"the publisher's pauses should show in the stored timestamps ({bound})");
            Assert.True(elapsed >= bound, $"replay original fetched 3 messages in {elapsed}, the stored gaps add up to {bound}");

            // Caught up: what is published now goes out at once (no timed assertion: it just arrives).
            (await js.PublishAsync("replayp.a", "late")).EnsureSuccess();
            var late = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(30) });
            Assert.Equal("late", late!.Data);
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task PushRateLimitHoldsDeliveryToTheConfiguredRate(string kind)
    {
        const int count = 20;
        const int payload = 400;
        const int burst = 1000; // the stream's max_msg_size is the limiter's burst
        const int bytesPerSecond = 4000;
        var (server, nats, js) = await StartAsync(kind);
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("RATE", ["rate.>"]) { MaxMsgSize = burst });
            var body = new string('x', payload);
            for (var i = 0; i < count; i++)
            {
                (await js.PublishAsync("rate.a", body)).EnsureSuccess();
            }
            await using var sub = await nats.SubscribeCoreAsync<string>("deliver.rate");
            var clock = Stopwatch.StartNew();
            await js.CreateOrUpdateConsumerAsync("RATE", new ConsumerConfig("limited")
            {
                DeliverSubject = "deliver.rate",
                AckPolicy = ConsumerConfigAckPolicy.None,
                RateLimitBps = bytesPerSecond * 8,
            });
            var got = 0;
            using var cts = new CancellationTokenSource(Long);
            await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
            {
                Assert.Equal(payload, msg.Data!.Length);
                if (++got == count)
                {
                    break;
                }
            }
            var elapsed = clock.Elapsed;
            // Payload bytes alone (Go also counts subject and ack reply): what exceeds the burst at the rate.
            var bound = TimeSpan.FromSeconds((double)(count * payload - burst) / bytesPerSecond);
            Assert.True(elapsed >= bound, $"{count} messages of {payload} B at {bytesPerSecond} B/s took {elapsed}, at least {bound} expected");

            // Lifting the limit on update lets the rest out without pacing (no timed assertion).
            for (var i = 0; i < 3; i++)
            {
                (await js.PublishAsync("rate.a", "fast")).EnsureSuccess();
            }
            await js.CreateOrUpdateConsumerAsync("RATE", new ConsumerConfig("limited")
            {
                DeliverSubject = "deliver.rate",
                AckPolicy = ConsumerConfigAckPolicy.None,
            });
            var fast = 0;
            await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
            {
                Assert.Equal("fast", msg.Data);
                if (++fast == 3)
                {
                    break;
                }
            }
        }
    }

    /// <summary>The stored timestamp (unix ns) from a <c>$JS.ACK.…</c> reply subject.</summary>
    private static DateTimeOffset Timestamp(string reply)
    {
        var tokens = reply.Split('.');
        var nanos = long.Parse(tokens[^2], System.Globalization.CultureInfo.InvariantCulture);
        return DateTimeOffset.UnixEpoch.AddTicks(nanos / 100);
    }
}
