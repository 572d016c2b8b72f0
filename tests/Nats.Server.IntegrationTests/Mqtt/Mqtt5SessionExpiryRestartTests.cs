using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// An MQTT 5 session's expiry is kept in its <c>$MQTT_sess</c> record, so a server restart neither forgets it (the
/// session and its consumers would stay forever) nor ends a session that has not expired.
/// </summary>
public sealed class Mqtt5SessionExpiryRestartTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Sessions_expire_on_time_after_a_restart_and_unexpired_ones_stay()
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-expiry-").FullName;
        // Still connected when the server stops: its expiry starts with that stop.
        using var cut = new MqttClientFactory().CreateMqttClient();
        try
        {
            await using (var first = await MqttTestServer.StartAsync("ours", storeDir: storeDir))
            {
                await LeaveSessionAsync(first, "exp-short", 2, "exp/short");
                await LeaveSessionAsync(first, "exp-long", 3600, "exp/long");
                await cut.ConnectAsync(Options(first, "exp-cut", 2));
                await cut.SubscribeAsync("exp/cut", MqttQualityOfServiceLevel.AtLeastOnce);
                await using var nats = new NatsConnection(new NatsOpts { Url = first.NatsUrl });
                Assert.Equal(3, await CountAsync(nats, "STREAM.INFO.$MQTT_sess", "state", "messages"));
                Assert.Equal(3, await CountAsync(nats, "STREAM.INFO.$MQTT_msgs", "state", "consumer_count"));
            }
            await using var second = await MqttTestServer.StartAsync("ours", storeDir: storeDir);
            await using (var nats = new NatsConnection(new NatsOpts { Url = second.NatsUrl }))
            {
                using var deadline = new CancellationTokenSource(Wait);
                while (await CountAsync(nats, "STREAM.INFO.$MQTT_sess", "state", "messages") != 1
                    || await CountAsync(nats, "STREAM.INFO.$MQTT_msgs", "state", "consumer_count") != 1)
                {
                    await Task.Delay(100, deadline.Token);
                }
            }
            using var client = new MqttClientFactory().CreateMqttClient();
            Assert.True((await client.ConnectAsync(Options(second, "exp-long", 3600))).IsSessionPresent);
            await client.DisconnectAsync();
            Assert.False((await client.ConnectAsync(Options(second, "exp-short", 2))).IsSessionPresent);
            await client.DisconnectAsync();
            Assert.False((await client.ConnectAsync(Options(second, "exp-cut", 2))).IsSessionPresent);
            await client.DisconnectAsync();
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private static async Task LeaveSessionAsync(MqttTestServer server, string clientId, uint expiry, string topic)
    {
        using var client = new MqttClientFactory().CreateMqttClient();
        Assert.False((await client.ConnectAsync(Options(server, clientId, expiry))).IsSessionPresent);
        await client.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await client.DisconnectAsync();
    }

    private static MqttClientOptions Options(MqttTestServer server, string clientId, uint expiry) =>
        new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort).WithClientId(clientId).WithProtocolVersion(MqttProtocolVersion.V500)
            .WithCleanStart(false).WithSessionExpiryInterval(expiry).WithTimeout(Wait).Build();

    private static async Task<long> CountAsync(NatsConnection nats, string api, string block, string field)
    {
        var info = await nats.RequestAsync<byte[], byte[]>("$JS.API." + api, [], replyOpts: new NatsSubOpts { Timeout = Wait });
        using var json = System.Text.Json.JsonDocument.Parse(info.Data!);
        return json.RootElement.GetProperty(block).GetProperty(field).GetInt64();
    }
}
