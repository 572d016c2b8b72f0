using System.Text;
using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Damage;

/// <summary>
/// A stream's message block damaged between two runs (tail truncated, one byte flipped, tail zeroed).
/// On restart: a Go-style "Filestore [S]" warning is logged, /jsz counts the damage, the
/// <c>$JS.EVENT.ADVISORY.STREAM.DAMAGED.S</c> advisory is sent (kept here by a stream capturing it), every
/// message outside the damage is served with its exact payload, nothing damaged is served, and every
/// publish acknowledged afterwards is served, also after one more restart, which reports no damage again.
/// </summary>
public sealed class DamagedStoreTests
{
    private const int Messages = 100;

    [Theory]
    [InlineData("truncate")]
    [InlineData("flip")]
    [InlineData("zero")]
    public async Task DamageIsReportedAndTheStreamKeepsServing(string damage)
    {
        var storeDir = Directory.CreateTempSubdirectory("nats-js-damage-").FullName;
        try
        {
            var payloads = new Dictionary<ulong, string>();
            await using (var server = await KillableServer.StartAsync(go: false, storeDir, "-m", "-1"))
            {
                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url });
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("ADV", ["$JS.EVENT.ADVISORY.STREAM.DAMAGED.>"]));
                await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]));
                for (var i = 0; i < Messages; i++)
                {
                    var payload = $"m{i:D3}-" + new string((char)('a' + (i % 26)), 150);
                    var ack = await js.PublishAsync($"s.{i % 4}", payload);
                    ack.EnsureSuccess();
                    payloads[ack.Seq] = payload;
                }
                // No clean stop: the active block has no sealed index, so recovery reads every record.
                await server.KillAsync();
            }

            Damage(storeDir, damage);

            ulong lastSeq;
            await using (var server = await KillableServer.StartAsync(go: false, storeDir, "-m", "-1"))
            {
                await server.Log.WaitForAsync(l => l.Contains("Filestore [S] ", StringComparison.Ordinal));
                var jsz = await JszAsync(server);
                Assert.True(jsz.TryGetProperty("store_damage", out var counted), "/jsz has no store_damage:\n" + jsz);
                Assert.True(counted.GetProperty("events").GetUInt64() >= 1);
                var lostCounted = counted.GetProperty("lost_msgs").GetUInt64();
                Assert.InRange(lostCounted, 1UL, 3UL);

                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url });
                var js = new NatsJSContext(nats);
                // The advisory is sent once every stream is open; wait for ADV to have captured it.
                var advisories = await js.GetStreamAsync("ADV");
                using (var wait = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
                {
                    while (advisories.Info.State.Messages == 0)
                    {
                        await Task.Delay(50, wait.Token);
                        await advisories.RefreshAsync();
                    }
                }
                var advisory = await advisories.GetAsync(new StreamMsgGetRequest { LastBySubj = "$JS.EVENT.ADVISORY.STREAM.DAMAGED.S" });
                using (var doc = JsonDocument.Parse(advisory.Message.Data.ToArray()))
                {
                    Assert.Equal("io.nats.jetstream.advisory.v1.stream_damaged", doc.RootElement.GetProperty("type").GetString());
                    Assert.Equal("S", doc.RootElement.GetProperty("stream").GetString());
                    Assert.False(string.IsNullOrEmpty(doc.RootElement.GetProperty("description").GetString()));
                }

                var stream = await js.GetStreamAsync("S");
                var missing = await CheckServedAsync(stream, payloads);
                Assert.InRange(missing, 1, 3);
                // A damaged region whose sequences cannot be read (a zeroed tail after a crash) counts once.
                Assert.InRange(lostCounted, 1UL, (ulong)missing);
                lastSeq = (ulong)stream.Info.State.LastSeq;

                // Acknowledged after the damage means served, now and after a restart.
                for (var i = 0; i < 50; i++)
                {
                    var payload = $"after-{i}";
                    var ack = await js.PublishAsync("s.after", payload);
                    ack.EnsureSuccess();
                    Assert.True(ack.Seq > Messages, $"sequence {ack.Seq} reused");
                    payloads[ack.Seq] = payload;
                }
                await CheckServedAsync(await js.GetStreamAsync("S"), payloads.Where(p => p.Key > Messages).ToDictionary());
                await server.KillAsync();
            }

            await using (var server = await KillableServer.StartAsync(go: false, storeDir, "-m", "-1"))
            {
                await using var nats = new NatsConnection(new NatsOpts { Url = server.Url });
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync("S");
                var after = payloads.Where(p => p.Key > Messages).ToDictionary();
                Assert.Equal(0, await CheckServedAsync(stream, after));
                // The damaged block was repaired on the first recovery: nothing is reported twice.
                var jsz = await JszAsync(server);
                Assert.False(jsz.TryGetProperty("store_damage", out _), "damage reported again:\n" + jsz);
                Assert.True((ulong)stream.Info.State.LastSeq > lastSeq);
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>Every sequence is served with its exact payload or not at all; returns how many are not.</summary>
    private static async Task<int> CheckServedAsync(INatsJSStream stream, Dictionary<ulong, string> payloads)
    {
        var missing = 0;
        foreach (var (seq, payload) in payloads)
        {
            try
            {
                var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
                Assert.Equal(payload, Encoding.UTF8.GetString(message.Message.Data.Span));
            }
            catch (NatsJSApiException e) when (e.Error.ErrCode == 10037)
            {
                missing++;
            }
        }
        return missing;
    }

    private static void Damage(string storeDir, string kind)
    {
        var block = Directory.GetFiles(Path.Combine(storeDir, "jetstream", "$G", "streams", "S"), "*.blk", SearchOption.AllDirectories)
            .OrderByDescending(f => new FileInfo(f).Length).First();
        var bytes = File.ReadAllBytes(block);
        Assert.True(bytes.Length > 10_000, $"{block} holds {bytes.Length} bytes");
        switch (kind)
        {
            case "truncate":
                // Half of the last record goes.
                File.WriteAllBytes(block, bytes[..^100]);
                break;
            case "flip":
                bytes[bytes.Length / 2] ^= 0x20;
                File.WriteAllBytes(block, bytes);
                break;
            default:
                Array.Clear(bytes, bytes.Length - 300, 300);
                File.WriteAllBytes(block, bytes);
                break;
        }
    }

    private static async Task<JsonElement> JszAsync(KillableServer server)
    {
        Assert.True(server.MonitorPort > 0, "no monitoring port in the log");
        using var http = new HttpClient();
        var text = await http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/jsz");
        return JsonDocument.Parse(text).RootElement.Clone();
    }
}
