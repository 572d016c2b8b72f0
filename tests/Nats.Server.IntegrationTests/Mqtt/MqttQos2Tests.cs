using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// QoS 2 as Go 2.10 added it (Go 2.9.10, our differential oracle, closes the connection instead, so
/// these run against ours only with the 2.10 source as the reference): PUBREC/PUBREL/PUBCOMP and
/// exactly-once delivery.
/// </summary>
public sealed class MqttQos2Tests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task Resent_qos2_publish_is_delivered_once_on_pubrel()
    {
        await using var server = await MqttTestServer.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        var inbox = Channel.CreateUnbounded<NatsMsg<byte[]>>();
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("q2.>");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                await inbox.Writer.WriteAsync(msg);
            }
        });
        await nats.PingAsync();

        await using var mqtt = await MqttRawClient.ConnectAsync(server.MqttPort);
        await mqtt.SendAsync(MqttRawClient.Connect("q2pub"));
        await mqtt.ReadAsync(4);
        await mqtt.SendAsync(MqttRawClient.Publish("q2/a", "once", qos: 2, packetId: 5));
        Assert.Equal(new byte[] { 0x50, 2, 0, 5 }, await mqtt.ReadAsync(4));
        var dup = MqttRawClient.Publish("q2/a", "once", qos: 2, packetId: 5);
        dup[0] |= 0x08;
        await mqtt.SendAsync(dup);
        Assert.Equal(new byte[] { 0x50, 2, 0, 5 }, await mqtt.ReadAsync(4));
        await mqtt.SendAsync(0x62, 2, 0, 5);
        Assert.Equal(new byte[] { 0x70, 2, 0, 5 }, await mqtt.ReadAsync(4));
        // A repeated PUBREL is completed again but delivers nothing.
        await mqtt.SendAsync(0x62, 2, 0, 5);
        Assert.Equal(new byte[] { 0x70, 2, 0, 5 }, await mqtt.ReadAsync(4));

        var message = await inbox.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("q2.a", "once", "2"), (message.Subject, Encoding.UTF8.GetString(message.Data!), message.Headers?["Nmqtt-Pub"].ToString()));
        await nats.PingAsync();
        await mqtt.SendAsync(0xc0, 0);
        await mqtt.ReadAsync(2);
        Assert.False(inbox.Reader.TryRead(out _));
    }

    [Fact]
    public async Task Qos2_subscriber_gets_publish_then_pubrel_after_pubrec()
    {
        await using var server = await MqttTestServer.StartAsync("ours");
        await using var subscriber = await MqttRawClient.ConnectAsync(server.MqttPort);
        await subscriber.SendAsync(MqttRawClient.Connect("q2sub"));
        await subscriber.ReadAsync(4);
        await subscriber.SendAsync(MqttRawClient.Subscribe(1, "q2/b", 2));
        Assert.Equal(new byte[] { 0x90, 3, 0, 1, 2 }, await subscriber.ReadAsync(5));

        await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
        await publisher.SendAsync(MqttRawClient.Connect("q2pub2"));
        await publisher.ReadAsync(4);
        await publisher.SendAsync(MqttRawClient.Publish("q2/b", "x", qos: 2, packetId: 9));
        await publisher.ReadAsync(4);
        await publisher.SendAsync(0x62, 2, 0, 9);
        await publisher.ReadAsync(4);

        var publish = await subscriber.ReadAsync(11);
        Assert.Equal(new byte[] { 0x34, 9, 0, 4, (byte)'q', (byte)'2', (byte)'/', (byte)'b' }, publish[..8]);
        Assert.Equal((byte)'x', publish[10]);
        await subscriber.SendAsync(0x50, 2, publish[8], publish[9]);
        Assert.Equal(new byte[] { 0x62, 2, publish[8], publish[9] }, await subscriber.ReadAsync(4));
        await subscriber.SendAsync(0x70, 2, publish[8], publish[9]);
        await subscriber.SendAsync(0xc0, 0);
        Assert.Equal(new byte[] { 0xd0, 0 }, await subscriber.ReadAsync(2));
    }

    [Fact]
    public async Task Mqttnet_qos2_publish_reaches_mqttnet_qos2_subscriber_exactly_once()
    {
        await using var server = await MqttTestServer.StartAsync("ours");
        var factory = new MqttClientFactory();
        using var subscriber = factory.CreateMqttClient();
        var received = Channel.CreateUnbounded<MqttApplicationMessage>();
        subscriber.ApplicationMessageReceivedAsync += e =>
        {
            received.Writer.TryWrite(e.ApplicationMessage);
            return Task.CompletedTask;
        };
        await subscriber.ConnectAsync(Options(server, "net-q2-sub"));
        await subscriber.SubscribeAsync("exact/#", MqttQualityOfServiceLevel.ExactlyOnce);
        using var publisher = factory.CreateMqttClient();
        await publisher.ConnectAsync(Options(server, "net-q2-pub"));
        var result = await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("exact/1").WithPayload("one")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce).Build());
        Assert.True(result.IsSuccess);
        var message = await received.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("exact/1", "one", MqttQualityOfServiceLevel.ExactlyOnce), (message.Topic, message.ConvertPayloadToString(), message.QualityOfServiceLevel));
        await subscriber.PingAsync();
        Assert.False(received.Reader.TryRead(out _));
        await publisher.DisconnectAsync();
        await subscriber.DisconnectAsync();
    }

    private static MqttClientOptions Options(MqttTestServer server, string clientId) =>
        new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort).WithClientId(clientId)
            .WithProtocolVersion(MqttProtocolVersion.V311).WithTimeout(Wait).Build();
}
