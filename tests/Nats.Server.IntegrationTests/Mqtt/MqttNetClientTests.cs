using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTTnet 5 (MQTT 3.1.1) against Go 2.9.10 and ours, with NATS.Net on the other side.</summary>
public sealed class MqttNetClientTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Qos0_and_qos1_flow_both_ways_between_mqttnet_and_nats(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        using var mqtt = await ConnectAsync(server, "net-both");
        var received = Inbox(mqtt);
        await mqtt.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter("sensors/+/temp", MqttQualityOfServiceLevel.AtMostOnce)
            .WithTopicFilter("cmd/#", MqttQualityOfServiceLevel.AtLeastOnce)
            .Build());

        // NATS -> MQTT
        await nats.PublishAsync("sensors.k1.temp", Encoding.UTF8.GetBytes("21.5"));
        var first = await received.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal("sensors/k1/temp", first.Topic);
        Assert.Equal("21.5", first.ConvertPayloadToString());
        Assert.Equal(MqttQualityOfServiceLevel.AtMostOnce, first.QualityOfServiceLevel);

        // MQTT -> NATS, QoS 0 and QoS 1 (acknowledged)
        var natsInbox = Channel.CreateUnbounded<NatsMsg<byte[]>>();
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("up.>");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                await natsInbox.Writer.WriteAsync(msg);
            }
        });
        await nats.PingAsync();
        await mqtt.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("up/zero").WithPayload("a").Build());
        var ack = await mqtt.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("up/one").WithPayload("b")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(ack.IsSuccess);
        var m1 = await natsInbox.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        var m2 = await natsInbox.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("up.zero", "a", "0"), (m1.Subject, Encoding.UTF8.GetString(m1.Data!), m1.Headers?["Nmqtt-Pub"].ToString()));
        Assert.Equal(("up.one", "b", "1"), (m2.Subject, Encoding.UTF8.GetString(m2.Data!), m2.Headers?["Nmqtt-Pub"].ToString()));

        // MQTT QoS 1 -> MQTT QoS 1 subscription (cmd/# also matches cmd).
        await mqtt.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("cmd").WithPayload("go")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        var command = await received.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("cmd", "go", MqttQualityOfServiceLevel.AtLeastOnce), (command.Topic, command.ConvertPayloadToString(), command.QualityOfServiceLevel));
        await mqtt.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Retained_messages_are_set_replaced_cleared_and_delivered_on_subscribe(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        using (var publisher = await ConnectAsync(server, "net-retain-pub"))
        {
            foreach (var (topic, payload) in new[] { ("status/a", "one"), ("status/a", "two"), ("status/b", "bee"), ("status/c", "cee"), ("status/c", "") })
            {
                await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithRetainFlag()
                    .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
            }
            await publisher.DisconnectAsync();
        }
        using var subscriber = await ConnectAsync(server, "net-retain-sub");
        var received = Inbox(subscriber);
        await subscriber.SubscribeAsync("status/+", MqttQualityOfServiceLevel.AtMostOnce);
        var got = new List<string>();
        for (var i = 0; i < 2; i++)
        {
            var message = await received.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.True(message.Retain);
            got.Add(message.Topic + "=" + message.ConvertPayloadToString());
        }
        got.Sort(StringComparer.Ordinal);
        Assert.Equal(["status/a=two", "status/b=bee"], got);
        await subscriber.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Persistent_session_keeps_subscriptions_and_qos1_messages_while_away(string kind)
    {
        // A short ack_wait: Go may hand the message to the departing connection, then redelivers it only after ack_wait.
        await using var server = await MqttTestServer.StartAsync(kind, "ack_wait: \"2s\"");
        using (var first = await ConnectAsync(server, "net-durable", clean: false))
        {
            await first.SubscribeAsync("jobs/#", MqttQualityOfServiceLevel.AtLeastOnce);
            await first.DisconnectAsync();
        }
        using (var publisher = await ConnectAsync(server, "net-durable-pub"))
        {
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("jobs/1").WithPayload("queued")
                .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
            await publisher.DisconnectAsync();
        }
        var factory = new MqttClientFactory();
        using var again = factory.CreateMqttClient();
        var received = Inbox(again);
        var result = await again.ConnectAsync(Options(server, "net-durable", clean: false));
        Assert.True(result.IsSessionPresent);
        var message = await received.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("jobs/1", "queued"), (message.Topic, message.ConvertPayloadToString()));
        await again.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_second_connection_with_the_same_client_id_takes_over_the_session(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        var factory = new MqttClientFactory();
        using var old = factory.CreateMqttClient();
        var dropped = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        old.DisconnectedAsync += _ =>
        {
            dropped.TrySetResult();
            return Task.CompletedTask;
        };
        await old.ConnectAsync(Options(server, "net-same"));
        using var replacement = await ConnectAsync(server, "net-same");
        await dropped.Task.WaitAsync(Wait);
        Assert.True(replacement.IsConnected);
        await replacement.PingAsync();
        await replacement.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Persistent_sessions_and_retained_messages_survive_a_server_restart(string kind)
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-restart-").FullName;
        try
        {
            await using (var first = await MqttTestServer.StartAsync(kind, storeDir: storeDir))
            {
                using var durable = await ConnectAsync(first, "net-restart", clean: false);
                await durable.SubscribeAsync("persist/#", MqttQualityOfServiceLevel.AtLeastOnce);
                await durable.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("cfg/x").WithPayload("kept").WithRetainFlag()
                    .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
                await durable.DisconnectAsync();
            }
            await using var second = await MqttTestServer.StartAsync(kind, storeDir: storeDir);
            var factory = new MqttClientFactory();
            using var again = factory.CreateMqttClient();
            var received = Inbox(again);
            var result = await again.ConnectAsync(Options(second, "net-restart", clean: false));
            Assert.True(result.IsSessionPresent);
            await using var nats = new NatsConnection(new NatsOpts { Url = second.NatsUrl });
            await nats.PublishAsync("persist.a", Encoding.UTF8.GetBytes("after-restart"));
            var message = await received.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.Equal(("persist/a", "after-restart"), (message.Topic, message.ConvertPayloadToString()));
            await again.SubscribeAsync("cfg/+", MqttQualityOfServiceLevel.AtMostOnce);
            var retained = await received.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.Equal(("cfg/x", "kept", true), (retained.Topic, retained.ConvertPayloadToString(), retained.Retain));
            await again.DisconnectAsync();
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
