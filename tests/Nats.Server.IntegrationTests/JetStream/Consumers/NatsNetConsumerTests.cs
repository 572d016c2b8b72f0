using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>The official .NET client (NATS.Net 3.3.2) driving consumers of every kind on our server.</summary>
public sealed class NatsNetConsumerTests
{
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(30);

    private static async Task<(ITestServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync(string? storeDir = null)
    {
        var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true, StoreDir = storeDir });
        var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await connection.ConnectAsync();
        return (server, connection, new NatsJSContext(connection));
    }

    private static async Task PublishAsync(NatsJSContext js, string subject, int count, int start = 0)
    {
        for (var i = start; i < start + count; i++)
        {
            (await js.PublishAsync(subject, $"m{i}")).EnsureSuccess();
        }
    }

    private static async Task<List<INatsJSMsg<string>>> FetchAsync(INatsJSConsumer consumer, int max, TimeSpan? expires = null)
    {
        var list = new List<INatsJSMsg<string>>();
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = max, Expires = expires ?? TimeSpan.FromSeconds(5) }))
        {
            list.Add(msg);
        }
        return list;
    }

    [Fact]
    public async Task DurablePullFetchAckAndInfoState()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
            await PublishAsync(js, "orders.new", 10);
            var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
            Assert.Equal(10UL, consumer.Info.NumPending);

            var batch = await FetchAsync(consumer, 5);
            Assert.Equal(["m0", "m1", "m2", "m3", "m4"], batch.Select(m => m.Data));
            Assert.Equal("orders.new", batch[0].Subject);
            Assert.Equal(1UL, batch[0].Metadata!.Value.Sequence.Stream);
            Assert.Equal(9UL, batch[0].Metadata!.Value.NumPending);

            await consumer.RefreshAsync();
            Assert.Equal(5, consumer.Info.NumAckPending);
            Assert.Equal(5UL, consumer.Info.Delivered.ConsumerSeq);
            Assert.Equal(0UL, consumer.Info.AckFloor.StreamSeq);

            foreach (var msg in batch)
            {
                await msg.AckAsync(new AckOpts { DoubleAck = true });
            }
            await consumer.RefreshAsync();
            Assert.Equal(0, consumer.Info.NumAckPending);
            Assert.Equal(5UL, consumer.Info.AckFloor.StreamSeq);
            Assert.Equal(5UL, consumer.Info.AckFloor.ConsumerSeq);
            Assert.Equal(5UL, consumer.Info.NumPending);

            var names = new List<string>();
            await foreach (var name in js.ListConsumerNamesAsync("ORDERS"))
            {
                names.Add(name);
            }
            Assert.Equal(["worker"], names);
            Assert.True(await js.DeleteConsumerAsync("ORDERS", "worker"));
            var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetConsumerAsync("ORDERS", "worker"));
            Assert.Equal(10014, missing.Error.ErrCode);
        }
    }

    [Fact]
    public async Task FetchNoWaitOnEmptyAndExpiresEndTheRequest()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("EMPTY", ["empty.>"]));
            var consumer = await js.CreateOrUpdateConsumerAsync("EMPTY", new ConsumerConfig("c"));
            var none = new List<INatsJSMsg<string>>();
            await foreach (var msg in consumer.FetchNoWaitAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10 }))
            {
                none.Add(msg);
            }
            Assert.Empty(none);
            // A 1 s request ends with 408 (the fetch completes empty rather than hanging).
            Assert.Empty(await FetchAsync(consumer, 10, TimeSpan.FromSeconds(1)));

            await PublishAsync(js, "empty.x", 3);
            var some = new List<INatsJSMsg<string>>();
            await foreach (var msg in consumer.FetchNoWaitAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10 }))
            {
                some.Add(msg);
            }
            Assert.Equal(3, some.Count);
        }
    }

    [Fact]
    public async Task NakRedeliversAndAckWaitRedelivers()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("R", ["r.>"]));
            await PublishAsync(js, "r.a", 1);
            var consumer = await js.CreateOrUpdateConsumerAsync("R", new ConsumerConfig("c") { AckWait = TimeSpan.FromSeconds(1) });

            var first = await FetchAsync(consumer, 1);
            Assert.Equal("m0", first[0].Data);
            await first[0].NakAsync();
            var again = await FetchAsync(consumer, 1);
            Assert.Equal("m0", again[0].Data);
            Assert.Equal(2UL, again[0].Metadata!.Value.NumDelivered);

            // Not acked: after ack_wait (1 s) the message comes back a third time.
            var third = await FetchAsync(consumer, 1, TimeSpan.FromSeconds(10));
            Assert.Equal("m0", third[0].Data);
            Assert.Equal(3UL, third[0].Metadata!.Value.NumDelivered);
            await third[0].AckAsync();

            await consumer.RefreshAsync();
            Assert.Equal(0, consumer.Info.NumRedelivered);
            Assert.Equal(1UL, consumer.Info.AckFloor.StreamSeq);

            await PublishAsync(js, "r.a", 1, start: 1);
            var next = await FetchAsync(consumer, 1);
            Assert.Equal("m1", next[0].Data);
            await next[0].AckTerminateAsync();
            await consumer.RefreshAsync();
            Assert.Equal(0, consumer.Info.NumAckPending);
        }
    }

    [Fact]
    public async Task ConsumeLoopAndMaxDeliver()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("C", ["c.>"]));
            await PublishAsync(js, "c.x", 50);
            var consumer = await js.CreateOrUpdateConsumerAsync("C", new ConsumerConfig("loop") { MaxDeliver = 2 });
            var seen = new List<string>();
            using var cts = new CancellationTokenSource(Long);
            await foreach (var msg in consumer.ConsumeAsync<string>(opts: new NatsJSConsumeOpts { MaxMsgs = 20 }, cancellationToken: cts.Token))
            {
                seen.Add(msg.Data!);
                if (msg.Data == "m7" && msg.Metadata!.Value.NumDelivered < 2)
                {
                    await msg.NakAsync(cancellationToken: cts.Token);
                    continue;
                }
                if (msg.Data == "m9")
                {
                    // Never acked twice: max_deliver 2 stops it, no third delivery.
                    await msg.NakAsync(cancellationToken: cts.Token);
                    continue;
                }
                await msg.AckAsync(cancellationToken: cts.Token);
                if (seen.Count(s => s.StartsWith('m')) >= 52)
                {
                    break;
                }
            }
            Assert.Equal(2, seen.Count(s => s == "m7"));
            Assert.Equal(2, seen.Count(s => s == "m9"));
            Assert.Equal(52, seen.Count);
        }
    }

    [Fact]
    public async Task OrderedConsumerReadsEverythingInOrder()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("O", ["o.>"]));
            await PublishAsync(js, "o.a", 200);
            var ordered = await js.CreateOrderedConsumerAsync("O");
            var seen = new List<string>();
            using var cts = new CancellationTokenSource(Long);
            await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: cts.Token))
            {
                seen.Add(msg.Data!);
                if (seen.Count == 200)
                {
                    break;
                }
            }
            Assert.Equal(Enumerable.Range(0, 200).Select(i => $"m{i}"), seen);
        }
    }

    [Fact]
    public async Task PushConsumerDeliversToItsSubjectWithAcks()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("P", ["p.>"]));
            await PublishAsync(js, "p.a", 5);
            await using var sub = await nats.SubscribeCoreAsync<string>("deliver.p");
            await js.CreateOrUpdateConsumerAsync("P", new ConsumerConfig("push")
            {
                DeliverSubject = "deliver.p",
                AckPolicy = ConsumerConfigAckPolicy.Explicit,
                FlowControl = true,
                IdleHeartbeat = TimeSpan.FromSeconds(1),
            });
            var got = new List<string>();
            using var cts = new CancellationTokenSource(Long);
            await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
            {
                if (msg.Headers is { Code: 100 })
                {
                    if (msg.ReplyTo is { } fc)
                    {
                        await nats.PublishAsync(fc, cancellationToken: cts.Token);
                    }
                    continue;
                }
                Assert.Equal("p.a", msg.Subject);
                Assert.StartsWith("$JS.ACK.P.push.1.", msg.ReplyTo);
                got.Add(msg.Data!);
                await nats.PublishAsync(msg.ReplyTo!, "+ACK", cancellationToken: cts.Token);
                if (got.Count == 5)
                {
                    break;
                }
            }
            Assert.Equal(["m0", "m1", "m2", "m3", "m4"], got);
            // A heartbeat comes while idle, with the last sequences.
            await foreach (var msg in sub.Msgs.ReadAllAsync(cts.Token))
            {
                if (msg.Headers is { Code: 100 } headers && headers.TryGetValue("Nats-Last-Stream", out var last))
                {
                    Assert.Equal("5", last.ToString());
                    break;
                }
            }
            var info = await js.GetConsumerAsync("P", "push");
            Assert.Equal(5UL, info.Info.AckFloor.StreamSeq);
            Assert.True(info.Info.PushBound);
        }
    }

    [Fact]
    public async Task WorkQueueRemovesAcknowledgedMessages()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("WQ", ["wq.>"]) { Retention = StreamConfigRetention.Workqueue });
            await PublishAsync(js, "wq.a", 4);
            var consumer = await js.CreateOrUpdateConsumerAsync("WQ", new ConsumerConfig("w"));
            var overlap = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync("WQ", new ConsumerConfig("w2")));
            Assert.Equal(10099, overlap.Error.ErrCode);
            foreach (var msg in await FetchAsync(consumer, 3))
            {
                await msg.AckAsync(new AckOpts { DoubleAck = true });
            }
            var stream = await js.GetStreamAsync("WQ");
            Assert.Equal(1L, stream.Info.State.Messages);
            Assert.Equal(4UL, stream.Info.State.FirstSeq);
        }
    }

    [Fact]
    public async Task InvalidConfigsGetGoErrors()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("V", ["v.>"]));
            async Task<int> ErrCode(ConsumerConfig config) =>
                (await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync("V", config))).Error.ErrCode;
            Assert.Equal(10093, await ErrCode(new ConsumerConfig("f") { FilterSubject = "other.>" }));
            Assert.Equal(10116, await ErrCode(new ConsumerConfig("b") { MaxDeliver = 2, Backoff = [TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2)] }));
            Assert.Equal(10094, await ErrCode(new ConsumerConfig("p") { DeliverPolicy = ConsumerConfigDeliverPolicy.ByStartSequence }));
            Assert.Equal(10088, await ErrCode(new ConsumerConfig("h") { IdleHeartbeat = TimeSpan.FromSeconds(1) }));
            Assert.Equal(10059, (await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.CreateOrUpdateConsumerAsync("NOPE", new ConsumerConfig("x")))).Error.ErrCode);
        }
    }

    [Fact]
    public async Task DurableConsumerStateSurvivesRestart()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-js-consumer-restart-").FullName;
        try
        {
            var (server, nats, js) = await StartAsync(storeDir);
            await using (server)
            await using (nats)
            {
                await js.CreateStreamAsync(new StreamConfig("D", ["d.>"]));
                await PublishAsync(js, "d.x", 6);
                var consumer = await js.CreateOrUpdateConsumerAsync("D", new ConsumerConfig("keep"));
                var batch = await FetchAsync(consumer, 4);
                await batch[0].AckAsync(new AckOpts { DoubleAck = true });
                await batch[1].AckAsync(new AckOpts { DoubleAck = true });
                // m2 and m3 stay unacknowledged across the restart.
            }
            var (server2, nats2, js2) = await StartAsync(storeDir);
            await using (server2)
            await using (nats2)
            {
                var consumer = await js2.GetConsumerAsync("D", "keep");
                Assert.Equal(2UL, consumer.Info.AckFloor.StreamSeq);
                Assert.Equal(2, consumer.Info.NumAckPending);
                var after = await FetchAsync(consumer, 4);
                Assert.Equal(["m2", "m3", "m4", "m5"], after.Select(m => m.Data));
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
