using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.PowerLoss;

/// <summary>
/// The store on <see cref="PowerCutMount"/>. An fsync that fails once with EIO (Linux then reports the
/// file clean: a later fsync succeeds without the lost pages) must not be followed by any PubAck for
/// what it covered: the publisher gets an error PubAck and keeps its connection, the failure is logged,
/// counted in /jsz and announced, later publishes are refused, and after a power cut every acknowledged
/// message is there. And data recovered after a kill -9 is fsynced before a retried publish is answered
/// as a duplicate of it.
/// </summary>
public sealed class FsyncFailureTests(ITestOutputHelper output)
{
    [Fact]
    public async Task AFailedFsyncIsReportedAndNothingItCoveredIsAcknowledged()
    {
        await using var mount = await PowerCutMount.StartAsync();
        var acknowledged = new List<ulong>();
        await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint, "-m", "-1"))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(nats);
            await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]));
            await using var advisories = await nats.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.STREAM.STORE_FAILED.S");
            for (var i = 0; i < 5; i++)
            {
                var ack = await js.PublishAsync("s.a", $"m{i}");
                ack.EnsureSuccess();
                acknowledged.Add(ack.Seq);
            }

            await mount.FailNextSyncAsync();
            var failed = await js.PublishAsync("s.a", "m5");
            output.WriteLine($"EIO on {await mount.FailedSyncAsync()}; PubAck: {failed.Error?.Description}");
            Assert.NotNull(failed.Error);
            var refused = await js.PublishAsync("s.a", "m6");
            Assert.NotNull(refused.Error);
            Assert.Contains("store write failed", refused.Error!.Description);
            Assert.Equal(NatsConnectionState.Open, nats.ConnectionState);

            await server.Log.WaitForAsync(l => l.Contains("[ERR] Filestore [S] fsync failed", StringComparison.Ordinal), timeout: TimeSpan.FromSeconds(30));
            using (var wait = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
            {
                var advisory = await advisories.Msgs.ReadAsync(wait.Token);
                using var doc = JsonDocument.Parse(advisory.Data!);
                Assert.Equal("io.nats.jetstream.advisory.v1.stream_store_failed", doc.RootElement.GetProperty("type").GetString());
                Assert.Equal("S", doc.RootElement.GetProperty("stream").GetString());
            }
            using (var http = new HttpClient())
            {
                var jsz = JsonDocument.Parse(await http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/jsz")).RootElement;
                Assert.Equal(1UL, jsz.GetProperty("store_damage").GetProperty("store_failures").GetUInt64());
            }
            await server.KillAsync();
        }

        await mount.CutAsync();
        await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(nats);
            var stream = await js.GetStreamAsync("S");
            foreach (var seq in acknowledged)
            {
                var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
                Assert.Equal($"m{seq - 1}", System.Text.Encoding.UTF8.GetString(message.Message.Data.Span));
            }
            // The reloaded store accepts again.
            (await js.PublishAsync("s.a", "after")).EnsureSuccess();
        }
    }

    [Fact]
    public async Task ADuplicateOfDataRecoveredAfterAKillIsAnsweredOnlyOnceItIsDurable()
    {
        await using var mount = await PowerCutMount.StartAsync();
        var root = Directory.CreateTempSubdirectory("nats-fsync-dup-").FullName;
        try
        {
            // Go's policy for the first run: the PubAck leaves before any fsync, the message stays in the page cache.
            var conf = Path.Combine(root, "interval.conf");
            await File.WriteAllTextAsync(conf, "jetstream { sync_interval: \"2m\" }\n");
            await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint, "-c", conf))
            {
                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("DUP", ["dup.>"]) { DuplicateWindow = TimeSpan.FromMinutes(5) });
                var ack = await js.PublishAsync("dup.a", "original", opts: new NatsJSPubOpts { MsgId = "m1" });
                ack.EnsureSuccess();
                await server.KillAsync(); // kill -9
            }

            // Restarted with our default (acknowledged means durable): the client retries; the answer says
            // "stored as 1", so 1 must survive the power cut that follows.
            await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint))
            {
                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
                var js = new NatsJSContext(nats);
                var again = await js.PublishAsync("dup.a", "retry", opts: new NatsJSPubOpts { MsgId = "m1" });
                Assert.True(again.Duplicate);
                Assert.Equal(1UL, again.Seq);
                await server.KillAsync();
            }

            await mount.CutAsync();
            await using (var server = await KillableServer.StartAsync(go: false, mount.MountPoint))
            {
                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync("DUP");
                var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 });
                Assert.Equal("original", System.Text.Encoding.UTF8.GetString(message.Message.Data.Span));
            }
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }
}
