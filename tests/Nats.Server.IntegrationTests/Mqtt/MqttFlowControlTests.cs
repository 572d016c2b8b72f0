using System.Buffers.Binary;
using MQTTnet;
using MQTTnet.Formatter;
using Nats.Server.IntegrationTests.Clients;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// An MQTT publisher faster than a NATS subscriber is paused as a NATS publisher is (the stall gate),
/// so the subscriber, whose server-side queue is far smaller than what is published, is never cut and
/// gets everything in order. Ours only: Go 2.9.10 cuts such a subscriber at max_pending.
/// </summary>
public sealed class MqttFlowControlTests
{
    private const string SmallMaxPending = "max_pending: 262144";

    [Fact]
    public async Task Raw_qos0_flood_from_mqtt_reaches_a_nats_net_subscriber_whole()
    {
        const int count = 6000;
        const int payloadSize = 4096;
        await using var server = await MqttTestServer.StartAsync("ours", extraConfig: SmallMaxPending);
        await using var subscriber = await CountingSubscriber.StartAsync(new Uri(server.NatsUrl).Port, "flood", count, publishers: 1);
        await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
        await publisher.SendAsync(MqttRawClient.Connect("flooder"));
        await publisher.ReadAsync(4);

        var packet = Publish("flood", payloadSize);
        var batch = new byte[packet.Length * 16];
        for (var sent = 0; sent < count;)
        {
            var n = Math.Min(16, count - sent);
            for (var i = 0; i < n; i++, sent++)
            {
                BinaryPrimitives.WriteInt64LittleEndian(packet.AsSpan(packet.Length - payloadSize + 1), sent);
                packet.CopyTo(batch, i * packet.Length);
            }
            await publisher.SendAsync(batch[..(n * packet.Length)]);
        }
        await publisher.SendAsync(0xc0, 0);
        Assert.Equal(new byte[] { 0xd0, 0 }, await publisher.ReadAsync(2));

        await subscriber.Done.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.Null(subscriber.Failure);
        Assert.Equal(count, subscriber.Received);
    }

    [Fact]
    public async Task Mqttnet_qos0_publisher_reaches_a_nats_net_subscriber_whole()
    {
        const int count = 4000;
        await using var server = await MqttTestServer.StartAsync("ours", extraConfig: SmallMaxPending);
        await using var subscriber = await CountingSubscriber.StartAsync(new Uri(server.NatsUrl).Port, "flood", count, publishers: 1);
        using var publisher = new MqttClientFactory().CreateMqttClient();
        await publisher.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort)
            .WithClientId("net-flooder").WithProtocolVersion(MqttProtocolVersion.V311).WithTimeout(TimeSpan.FromSeconds(30)).Build());
        var payload = new byte[4096];
        for (var i = 0; i < count; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(payload.AsSpan(1), i);
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("flood").WithPayload(payload).Build());
        }
        await publisher.PingAsync();
        await subscriber.Done.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.Null(subscriber.Failure);
        Assert.Equal(count, subscriber.Received);
        await publisher.DisconnectAsync();
    }

    /// <summary>A QoS 0 PUBLISH whose payload is publisher 0 and an 8-byte sequence (CountingSubscriber's format).</summary>
    private static byte[] Publish(string topic, int payloadSize)
    {
        var body = new List<byte> { (byte)(topic.Length >> 8), (byte)topic.Length };
        body.AddRange(System.Text.Encoding.UTF8.GetBytes(topic));
        body.AddRange(new byte[payloadSize]);
        return MqttRawClient.Packet(0x30, body);
    }
}
