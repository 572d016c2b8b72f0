using System.Collections.Concurrent;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// kill -9 of the real executable while an asynchronous publisher has up to 100 PubAcks in flight,
/// several times over one store directory: after each restart every acknowledged message is there with
/// its payload, and new messages get sequences above every acknowledged one (never reused).
/// </summary>
public sealed class JetStreamCrashTests
{
    private const int Cycles = 4;
    private const int AcksBeforeKill = 1500;
    private const int InFlight = 100;

    [Fact]
    public async Task KillDuringAsyncPublishLosesNoAcknowledgedMessage()
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-js-crash-").FullName;
        var acked = new ConcurrentDictionary<ulong, string>();
        try
        {
            for (var cycle = 0; cycle < Cycles; cycle++)
            {
                await using var server = await KillableServer.StartAsync(go: false, storeDir);
                try
                {
                    var port = server.Port;
                    await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(20) });
                    var js = new NatsJSContext(nats);
                    // Publishes caught by the kill wait out their timeout; a short one keeps the test quick.
                    await using var publisher = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(5) });
                    if (cycle == 0)
                    {
                        await js.CreateStreamAsync(new StreamConfig("CRASH", ["crash.>"]));
                    }
                    await VerifyAsync(js, acked, cycle);
                    await PublishUntilKilledAsync(new NatsJSContext(publisher), acked, cycle, server);
                }
                finally
                {
                    await server.KillAsync();
                }
            }
            await using var last = await KillableServer.StartAsync(go: false, storeDir);
            try
            {
                var port = last.Port;
                await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(20) });
                await VerifyAsync(new NatsJSContext(nats), acked, Cycles);
            }
            finally
            {
                await last.KillAsync();
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private static async Task VerifyAsync(NatsJSContext js, ConcurrentDictionary<ulong, string> acked, int cycle)
    {
        if (acked.IsEmpty)
        {
            return;
        }
        var stream = await js.GetStreamAsync("CRASH");
        var maxAcked = acked.Keys.Max();
        Assert.True((ulong)stream.Info.State.LastSeq >= maxAcked, $"cycle {cycle}: last seq {stream.Info.State.LastSeq} below acked {maxAcked}");
        foreach (var (seq, payload) in acked)
        {
            var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
            Assert.Equal(payload, System.Text.Encoding.UTF8.GetString(message.Message.Data.Span));
        }
        // A new message never takes a sequence that was acknowledged before the crash.
        var next = await js.PublishAsync("crash.check", $"check-{cycle}");
        next.EnsureSuccess();
        Assert.True(next.Seq > maxAcked, $"cycle {cycle}: sequence {next.Seq} reused (acked up to {maxAcked})");
        acked[next.Seq] = $"check-{cycle}";
    }

    private static async Task PublishUntilKilledAsync(NatsJSContext js, ConcurrentDictionary<ulong, string> acked, int cycle, KillableServer server)
    {
        var ackedThisCycle = 0;
        var window = new SemaphoreSlim(InFlight);
        var pending = new List<Task>();
        var killed = 0;
        for (var i = 0; Volatile.Read(ref killed) == 0; i++)
        {
            await window.WaitAsync();
            var payload = $"c{cycle}-m{i}";
            pending.Add(Task.Run(async () =>
            {
                try
                {
                    var ack = await js.PublishAsync($"crash.{i % 7}", payload);
                    if (ack.Error is null)
                    {
                        acked[ack.Seq] = payload;
                        if (Interlocked.Increment(ref ackedThisCycle) == AcksBeforeKill && Interlocked.Exchange(ref killed, 1) == 0)
                        {
                            // SIGKILL with acks still in flight.
                            server.Kill();
                        }
                    }
                }
                catch (Exception e) when (e is NatsException or OperationCanceledException or TimeoutException)
                {
                    // The server died under this publish: it was never acknowledged.
                }
                finally
                {
                    window.Release();
                }
            }));
        }
        await Task.WhenAll(pending).WaitAsync(TimeSpan.FromSeconds(90));
    }
}
