using System.Globalization;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTT 5 shared subscriptions at QoS 1: the group's members share one consumer (MQTTnet 5, ours and mosquitto).</summary>
public sealed class Mqtt5SharedSubscriptionTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    public static TheoryData<string> Brokers => new() { "ours", "mosquitto" };

    [Theory]
    [MemberData(nameof(Brokers))]
    public async Task Qos1_members_are_granted_qos1_and_get_every_message_once_across_the_group(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        var all = Channel.CreateUnbounded<(string Member, string Payload, MqttQualityOfServiceLevel Qos)>();
        var members = new List<IMqttClient>();
        try
        {
            foreach (var name in new[] { "a", "b" })
            {
                var client = await ConnectAsync(broker, "qshare-" + name);
                members.Add(client);
                client.ApplicationMessageReceivedAsync += e =>
                {
                    all.Writer.TryWrite((name, e.ApplicationMessage.ConvertPayloadToString(), e.ApplicationMessage.QualityOfServiceLevel));
                    return Task.CompletedTask;
                };
                var granted = await client.SubscribeAsync("$share/workers/qjobs/+", MqttQualityOfServiceLevel.AtLeastOnce);
                Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, granted.Items.Single().ResultCode);
            }
            using var publisher = await ConnectAsync(broker, "qshare-pub");
            const int count = 100;
            for (var i = 0; i < count; i++)
            {
                await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("qjobs/j").WithPayload(Text(i))
                    .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
            }
            var seen = new List<(string Member, string Payload, MqttQualityOfServiceLevel Qos)>();
            for (var i = 0; i < count; i++)
            {
                seen.Add(await all.Reader.ReadAsync().AsTask().WaitAsync(Wait));
            }
            Assert.Equal(Enumerable.Range(0, count).Select(Text).Order(StringComparer.Ordinal), seen.Select(s => s.Payload).Order(StringComparer.Ordinal));
            Assert.All(seen, s => Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, s.Qos));
            // Nothing more arrives once every message was acknowledged (no redelivery to the other member).
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("qjobs/end").WithPayload("end")
                .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
            Assert.Equal("end", (await all.Reader.ReadAsync().AsTask().WaitAsync(Wait)).Payload);
            Assert.False(all.Reader.TryRead(out _));
        }
        finally
        {
            foreach (var member in members)
            {
                member.Dispose();
            }
        }
    }

    [Fact]
    public async Task The_groups_consumer_serves_the_members_present_and_goes_with_the_last_member()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        var js = new NatsJSContext(nats);
        using var a = new MqttClientFactory().CreateMqttClient();
        using var b = new MqttClientFactory().CreateMqttClient();
        var inboxA = Inbox(a);
        var inboxB = Inbox(b);
        await a.ConnectAsync(Persistent(broker, "keep-a"));
        await b.ConnectAsync(Persistent(broker, "keep-b"));
        await a.SubscribeAsync("$share/keep/kq/+", MqttQualityOfServiceLevel.AtLeastOnce);
        await b.SubscribeAsync("$share/keep/kq/+", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Single(await SharedConsumersAsync(js));

        // b is away (its session stays): a alone gets every message.
        await b.DisconnectAsync();
        await broker.WaitForMqttConnectionsAsync(1);
        using var publisher = new MqttClientFactory().CreateMqttClient();
        await publisher.ConnectAsync(Mqtt5ClientTests.Options(broker, "keep-pub").Build());
        for (var i = 0; i < 20; i++)
        {
            await PublishQos1Async(publisher, "kq/x", Text(i));
        }
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal(Text(i), (await inboxA.ReadAsync().AsTask().WaitAsync(Wait)).ConvertPayloadToString());
        }

        // a leaves the group: b's stored session still holds the consumer, so it stays and keeps what comes meanwhile.
        await a.UnsubscribeAsync("$share/keep/kq/+");
        Assert.Single(await SharedConsumersAsync(js));
        await PublishQos1Async(publisher, "kq/x", "while-away");
        var resumed = await b.ConnectAsync(Persistent(broker, "keep-b"));
        Assert.True(resumed.IsSessionPresent);
        Assert.Equal("while-away", (await inboxB.ReadAsync().AsTask().WaitAsync(Wait)).ConvertPayloadToString());
        await PublishQos1Async(publisher, "kq/x", "after");
        Assert.Equal("after", (await inboxB.ReadAsync().AsTask().WaitAsync(Wait)).ConvertPayloadToString());
        Assert.False(inboxA.TryRead(out _));

        // The last member leaves: the consumer goes.
        await b.UnsubscribeAsync("$share/keep/kq/+");
        Assert.Empty(await SharedConsumersAsync(js));
    }

    private static async Task<List<string>> SharedConsumersAsync(NatsJSContext js)
    {
        using var cts = new CancellationTokenSource(Wait);
        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync("$MQTT_msgs", cts.Token))
        {
            if (name.StartsWith("share_", StringComparison.Ordinal))
            {
                names.Add(name);
            }
        }
        return names;
    }

    private static MqttClientOptions Persistent(Mqtt5Broker broker, string clientId) =>
        Mqtt5ClientTests.Options(broker, clientId).WithCleanStart(false).WithSessionExpiryInterval(300).Build();

    private static Task PublishQos1Async(IMqttClient publisher, string topic, string payload) =>
        publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload)
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());

    private static async Task<IMqttClient> ConnectAsync(Mqtt5Broker broker, string clientId)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(Mqtt5ClientTests.Options(broker, clientId).Build());
        return client;
    }

    private static string Text(int i) => i.ToString(CultureInfo.InvariantCulture);
}
