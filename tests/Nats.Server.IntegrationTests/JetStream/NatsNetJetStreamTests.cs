using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>The official .NET client (NATS.Net 3.3.2, NATS.Client.JetStream) driving streams on our server.</summary>
public sealed class NatsNetJetStreamTests
{
    private static async Task<(ITestServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync(string? storeDir = null)
    {
        var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true, StoreDir = storeDir });
        var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await connection.ConnectAsync();
        return (server, connection, new NatsJSContext(connection));
    }

    [Fact]
    public async Task CreateUpdatePurgeDeleteStream()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var stream = await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
            Assert.Equal("ORDERS", stream.Info.Config.Name);
            Assert.Equal(StreamConfigStorage.File, stream.Info.Config.Storage);

            for (var i = 0; i < 5; i++)
            {
                var ack = await js.PublishAsync($"orders.{i % 2}", $"order {i}");
                ack.EnsureSuccess();
                Assert.Equal((ulong)(i + 1), ack.Seq);
                Assert.Equal("ORDERS", ack.Stream);
            }

            var updated = await js.UpdateStreamAsync(new StreamConfig("ORDERS", ["orders.>", "returns.>"]) { MaxMsgs = 100 });
            Assert.Equal(100, updated.Info.Config.MaxMsgs);
            Assert.Equal(5L, updated.Info.State.Messages);

            var names = new List<string>();
            await foreach (var name in js.ListStreamNamesAsync())
            {
                names.Add(name);
            }
            Assert.Equal(["ORDERS"], names);

            var purge = await js.PurgeStreamAsync("ORDERS", new StreamPurgeRequest { Filter = "orders.0" });
            Assert.Equal(3L, (long)purge.Purged);
            await stream.RefreshAsync();
            Assert.Equal(2L, stream.Info.State.Messages);

            Assert.True(await js.DeleteStreamAsync("ORDERS"));
            var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("ORDERS"));
            Assert.Equal(10059, missing.Error.ErrCode);
        }
    }

    [Fact]
    public async Task PublishDedupAndExpectedSequence()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("EVENTS", ["events.>"]));
            var first = await js.PublishAsync("events.a", "x", opts: new NatsJSPubOpts { MsgId = "id-1" });
            var again = await js.PublishAsync("events.a", "x", opts: new NatsJSPubOpts { MsgId = "id-1" });
            Assert.False(first.Duplicate);
            Assert.True(again.Duplicate);
            Assert.Equal(first.Seq, again.Seq);

            var wrong = await js.PublishAsync("events.a", "y", opts: new NatsJSPubOpts { ExpectedLastSequence = 7 });
            Assert.NotNull(wrong.Error);
            Assert.Equal(10071, wrong.Error!.ErrCode);
            Assert.Equal("wrong last sequence: 1", wrong.Error.Description);

            var right = await js.PublishAsync("events.a", "y", opts: new NatsJSPubOpts { ExpectedLastSequence = 1, ExpectedStream = "EVENTS" });
            right.EnsureSuccess();
            Assert.Equal(2ul, right.Seq);

            var wrongSubject = await js.PublishAsync("events.b", "z", opts: new NatsJSPubOpts { ExpectedLastSubjectSequence = 2 });
            Assert.Equal(10071, wrongSubject.Error!.ErrCode);
            Assert.Equal("wrong last sequence: 0", wrongSubject.Error.Description);
        }
    }

    [Fact]
    public async Task MessageGetAndDirectGet()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var stream = await js.CreateStreamAsync(new StreamConfig("KV", ["kv.>"]) { AllowDirect = true, MaxMsgsPerSubject = 1 });
            (await js.PublishAsync("kv.a", "one")).EnsureSuccess();
            (await js.PublishAsync("kv.a", "two")).EnsureSuccess();
            (await js.PublishAsync("kv.b", "three")).EnsureSuccess();

            var direct = await stream.GetDirectAsync<string>(new StreamMsgGetRequest { LastBySubj = "kv.a" });
            Assert.Equal("two", direct.Data);
            Assert.Equal("2", direct.Headers!["Nats-Sequence"].ToString());
            Assert.Equal("KV", direct.Headers!["Nats-Stream"].ToString());

            var stored = await stream.GetAsync(new StreamMsgGetRequest { Seq = 3 });
            Assert.Equal("kv.b", stored.Message.Subject);
            Assert.Equal(3ul, stored.Message.Seq);

            Assert.True((await stream.DeleteMessageAsync(new StreamMsgDeleteRequest { Seq = 3 })).Success);
            await stream.RefreshAsync();
            Assert.Equal(1L, stream.Info.State.Messages);
        }
    }

    [Fact]
    public async Task RestartKeepsStreamsAndAcknowledgedMessages()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-js-restart-").FullName;
        try
        {
            var acked = new List<ulong>();
            var (server, nats, js) = await StartAsync(storeDir);
            await using (server)
            await using (nats)
            {
                await js.CreateStreamAsync(new StreamConfig("DURABLE", ["d.>"]) { MaxMsgsPerSubject = 1000, Description = "kept" });
                for (var i = 0; i < 300; i++)
                {
                    var ack = await js.PublishAsync($"d.{i % 3}", $"message {i}", opts: new NatsJSPubOpts { MsgId = $"m{i}" });
                    ack.EnsureSuccess();
                    acked.Add(ack.Seq);
                }
                await js.CreateStreamAsync(new StreamConfig("MEM", ["mem"]) { Storage = StreamConfigStorage.Memory });
            }

            var (server2, nats2, js2) = await StartAsync(storeDir);
            await using (server2)
            await using (nats2)
            {
                var stream = await js2.GetStreamAsync("DURABLE");
                Assert.Equal("kept", stream.Info.Config.Description);
                Assert.Equal(1000, stream.Info.Config.MaxMsgsPerSubject);
                Assert.Equal(acked.Count, (int)stream.Info.State.Messages);
                Assert.Equal(acked[^1], (ulong)stream.Info.State.LastSeq);
                foreach (var seq in new[] { acked[0], acked[150], acked[^1] })
                {
                    var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
                    Assert.Equal($"d.{(seq - 1) % 3}", message.Message.Subject);
                }
                // The duplicate window survives too, and new messages continue the sequence.
                var duplicate = await js2.PublishAsync("d.0", "again", opts: new NatsJSPubOpts { MsgId = "m299" });
                Assert.True(duplicate.Duplicate);
                var next = await js2.PublishAsync("d.0", "after restart");
                Assert.Equal(acked[^1] + 1, next.Seq);
                // Memory streams are gone after a restart, as in Go.
                await Assert.ThrowsAsync<NatsJSApiException>(async () => await js2.GetStreamAsync("MEM"));
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private static async Task WaitForMessagesAsync(INatsJSStream stream, long expected)
    {
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await stream.RefreshAsync();
        while (stream.Info.State.Messages < expected && !deadline.IsCancellationRequested)
        {
            await Task.Delay(20);
            await stream.RefreshAsync();
        }
    }

    [Fact]
    public async Task MirrorAndSourcesCopyMessages()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            await js.CreateStreamAsync(new StreamConfig("ORIGIN", ["origin.>"]));
            await js.CreateStreamAsync(new StreamConfig("OTHER", ["other.>"]));
            for (var i = 0; i < 4; i++)
            {
                (await js.PublishAsync($"origin.{i % 2}", $"o{i}")).EnsureSuccess();
            }
            (await js.PublishAsync("other.x", "x")).EnsureSuccess();

            var mirror = await js.CreateStreamAsync(new StreamConfig { Name = "MIRROR", Mirror = new StreamSource { Name = "ORIGIN" } });
            var sourced = await js.CreateStreamAsync(new StreamConfig
            {
                Name = "AGG",
                Sources = [new StreamSource { Name = "ORIGIN", FilterSubject = "origin.1" }, new StreamSource { Name = "OTHER" }],
            });
            (await js.PublishAsync("origin.1", "late")).EnsureSuccess();

            // Go copies asynchronously (ours right after the store), so wait for the state, bounded.
            await WaitForMessagesAsync(mirror, 5);
            Assert.Equal(5L, mirror.Info.State.Messages);
            Assert.Equal(5L, (long)mirror.Info.State.LastSeq);
            var copied = await mirror.GetAsync(new StreamMsgGetRequest { Seq = 5 });
            Assert.Equal("origin.1", copied.Message.Subject);

            await WaitForMessagesAsync(sourced, 4);
            // origin.1 twice before, once after creation, plus other.x.
            Assert.Equal(4L, sourced.Info.State.Messages);
            var last = await sourced.GetAsync(new StreamMsgGetRequest { LastBySubj = "origin.1" });
            Assert.Equal(4ul, last.Message.Seq);

            // A mirror takes no direct publishes.
            var overlap = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.CreateStreamAsync(new StreamConfig { Name = "BAD", Subjects = ["x"], Mirror = new StreamSource { Name = "ORIGIN" } }));
            Assert.Equal(10034, overlap.Error.ErrCode);
        }
    }
}
