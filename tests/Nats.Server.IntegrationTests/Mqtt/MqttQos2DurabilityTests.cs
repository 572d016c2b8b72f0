using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JetStream.PowerLoss;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// A PUBREC tells an MQTT client its QoS 2 message is stored. A PUBLISH resent on a new connection for a
/// packet id the server already holds is answered from the held copy, so that PUBREC must wait until the
/// copy is durable too. The store directory is on <see cref="PowerCutMount"/> with its syncs held.
/// </summary>
public sealed class MqttQos2DurabilityTests(ITestOutputHelper output)
{
    [Fact]
    public async Task PubrecOfAResentPublishWaitsUntilTheHeldCopyIsDurable()
    {
        await using var mount = await PowerCutMount.StartAsync();
        var config = Path.Combine(Path.GetDirectoryName(mount.MountPoint)!, "mqtt.conf");
        await File.WriteAllTextAsync(config, "server_name: mqtt_q2\nmqtt {\n host: 127.0.0.1\n port: -1\n}\n");
        await using var server = await KillableServer.StartAsync(go: false, mount.MountPoint, "-c", config);

        await using var first = await MqttRawClient.ConnectAsync(server.MqttPort);
        await first.SendAsync(MqttRawClient.Connect("q2durable"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await first.ReadAsync(4));

        await mount.HoldAsync();
        try
        {
            await first.SendAsync(MqttRawClient.Publish("q2/a", "once", qos: 2, packetId: 7));
            output.WriteLine($"held sync: {await mount.HeldSyncAsync()}");
            // The connection drops before its PUBREC; the client resends on a new one, as MQTT clients do.
            first.Abort();

            await using var second = await MqttRawClient.ConnectAsync(server.MqttPort);
            await second.SendAsync(MqttRawClient.Connect("q2durable"));
            Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await second.ReadAsync(4));
            var resent = MqttRawClient.Publish("q2/a", "once", qos: 2, packetId: 7);
            resent[0] |= 0x08;
            await second.SendAsync(resent);
            // PINGREQ after it: a PUBREC sent at once would come before the PINGRESP.
            await second.SendAsync(0xc0, 0);
            Assert.Equal(new byte[] { 0xd0, 0 }, await second.ReadAsync(2));

            await mount.ReleaseAsync();
            Assert.Equal(new byte[] { 0x50, 2, 0, 7 }, await second.ReadAsync(4));
            await second.SendAsync(0x62, 2, 0, 7);
            Assert.Equal(new byte[] { 0x70, 2, 0, 7 }, await second.ReadAsync(4));
        }
        finally
        {
            await mount.ReleaseAsync();
        }
    }
}
