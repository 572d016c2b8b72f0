using System.Diagnostics;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using Nats.Server.IntegrationTests.Infrastructure;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// An MQTT 5 will waiting for its will delay is kept in the session's <c>$MQTT_sess</c> record, so a server restart
/// does not lose it: it goes out when due, at once when it fell due while the server was down, and never when its
/// client came back first [MQTT-3.1.3-9].
/// </summary>
public sealed class Mqtt5WillDelayRestartTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Delayed_wills_survive_a_restart_go_out_when_due_and_not_after_the_client_is_back()
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-will-").FullName;
        try
        {
            Stopwatch overdue, back, due;
            await using (var first = await MqttTestServer.StartAsync("ours", storeDir: storeDir))
            {
                // The watcher's QoS 1 subscription keeps what the wills publish while it is away, across the restart.
                using (var watcher = new MqttClientFactory().CreateMqttClient())
                {
                    await watcher.ConnectAsync(Options(first, "will-watch", uint.MaxValue));
                    await watcher.SubscribeAsync("wills/#", MqttQualityOfServiceLevel.AtLeastOnce);
                    await watcher.DisconnectAsync();
                }
                overdue = await LeaveWithWillAsync(first, "will-over", "wills/over", 1);
                back = await LeaveWithWillAsync(first, "will-back", "wills/back", 15);
                due = await LeaveWithWillAsync(first, "will-due", "wills/due", 20);
                var mqtt = ((InProcessServer)first.Inner).Server.Mqtt!;
                using var deadline = new CancellationTokenSource(Wait);
                while (mqtt.ConnectionCount != 0)
                {
                    await Task.Delay(20, deadline.Token);
                }
            }
            // The first will falls due while no server runs.
            var left = TimeSpan.FromSeconds(1.2) - overdue.Elapsed;
            if (left > TimeSpan.Zero)
            {
                await Task.Delay(left);
            }
            await using var second = await MqttTestServer.StartAsync("ours", storeDir: storeDir);
            using var returning = new MqttClientFactory().CreateMqttClient();
            Assert.True((await returning.ConnectAsync(Options(second, "will-back", 3600))).IsSessionPresent);
            Assert.True(back.Elapsed < TimeSpan.FromSeconds(15), $"the restart took too long for this test ({back.Elapsed})");

            using var watcherAgain = new MqttClientFactory().CreateMqttClient();
            var inbox = Inbox(watcherAgain);
            Assert.True((await watcherAgain.ConnectAsync(Options(second, "will-watch", uint.MaxValue))).IsSessionPresent);
            var early = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.Equal(("wills/over", "gone: will-over"), (early.Topic, early.ConvertPayloadToString()));
            // The returning client's will (due at 15 s) would come before this one (due at 20 s): it was not sent.
            var next = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
            var at = due.Elapsed;
            Assert.Equal(("wills/due", "gone: will-due"), (next.Topic, next.ConvertPayloadToString()));
            Assert.True(at >= TimeSpan.FromSeconds(19.5), $"will due after 20 s came after {at}");
            await returning.DisconnectAsync();
            await watcherAgain.DisconnectAsync();
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>Connects with a QoS 1 will and leaves with DISCONNECT 0x04 (will kept); the watch starts as it leaves.</summary>
    private static async Task<Stopwatch> LeaveWithWillAsync(MqttTestServer server, string clientId, string topic, uint delay)
    {
        using var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort).WithClientId(clientId)
            .WithProtocolVersion(MqttProtocolVersion.V500).WithCleanStart(false).WithSessionExpiryInterval(3600).WithTimeout(Wait)
            .WithWillTopic(topic).WithWillPayload("gone: " + clientId).WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
            .WithWillDelayInterval(delay).Build());
        var watch = Stopwatch.StartNew();
        await client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build());
        return watch;
    }

    private static MqttClientOptions Options(MqttTestServer server, string clientId, uint expiry) =>
        new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort).WithClientId(clientId).WithProtocolVersion(MqttProtocolVersion.V500)
            .WithCleanStart(false).WithSessionExpiryInterval(expiry).WithTimeout(Wait).Build();
}
