using Nats.Server.Embedding;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.Embedding;

/// <summary>JetStream in an embedded server: a temporary store of the host's own, or a directory the caller names.</summary>
public sealed class EmbeddedJetStreamTests
{
    [Fact]
    public async Task EnableJetStream_WithoutDirectory_StoresInATemporaryDirectory_RemovedAtStop()
    {
        var before = Directory.GetDirectories(Path.GetTempPath(), "nats-embedded-js-*").ToHashSet();
        var host = await NatsServerHost.StartAsync(new NatsServerHostOptions { EnableJetStream = true });
        string storeDir;
        await using (var connection = new NatsConnection(new NatsOpts { Url = host.ClientUrl, RequestTimeout = TimeSpan.FromSeconds(20) }))
        {
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig("EMBEDDED", ["embedded.>"]));
            var ack = await js.PublishAsync("embedded.a", "hello");
            ack.EnsureSuccess();
            Assert.Equal(1UL, ack.Seq);

            var dirs = Directory.GetDirectories(Path.GetTempPath(), "nats-embedded-js-*")
                .Where(d => !before.Contains(d) && Directory.Exists(Path.Combine(d, "jetstream", "$G", "streams", "EMBEDDED")))
                .ToList();
            storeDir = Assert.Single(dirs);
        }
        await host.DisposeAsync();
        Assert.False(Directory.Exists(storeDir));
    }

    [Fact]
    public async Task JetStreamStoreDirectory_IsKept_AndStreamsComeBackInTheNextHost()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-embedded-own-").FullName;
        try
        {
            var options = new NatsServerHostOptions { EnableJetStream = true, JetStreamStoreDirectory = storeDir };
            await using (var first = await NatsServerHost.StartAsync(options))
            await using (var connection = new NatsConnection(new NatsOpts { Url = first.ClientUrl, RequestTimeout = TimeSpan.FromSeconds(20) }))
            {
                var js = new NatsJSContext(connection);
                await js.CreateStreamAsync(new StreamConfig("KEPT", ["kept.>"]));
                (await js.PublishAsync("kept.a", "one")).EnsureSuccess();
                (await js.PublishAsync("kept.b", "two")).EnsureSuccess();
            }

            await using var second = await NatsServerHost.StartAsync(new NatsServerHostOptions { EnableJetStream = true, JetStreamStoreDirectory = storeDir });
            await using var again = new NatsConnection(new NatsOpts { Url = second.ClientUrl, RequestTimeout = TimeSpan.FromSeconds(20) });
            var stream = await new NatsJSContext(again).GetStreamAsync("KEPT");
            Assert.Equal(2L, stream.Info.State.Messages);
            Assert.True(Directory.Exists(storeDir));
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
