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

    /// <summary>
    /// Specification 4.8.2: each message goes to one member of the group whatever QoS the members asked for. A QoS 0
    /// member, a QoS 1 member and (ours) a NATS queue subscriber of the group: every QoS 1 publish reaches exactly one
    /// of them, at the QoS of the member that got it.
    /// </summary>
    [Theory]
    [MemberData(nameof(Brokers))]
    public async Task Members_of_mixed_qos_and_nats_members_get_each_message_exactly_once(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        var all = Channel.CreateUnbounded<(string Member, string Payload, MqttQualityOfServiceLevel Qos)>();
        await using var nats = broker.IsOurs ? new NatsConnection(new NatsOpts { Url = broker.NatsUrl }) : null;
        NatsJSContext? js = null;
        Task? natsMember = null;
        using var stop = new CancellationTokenSource();
        if (nats is not null)
        {
            js = new NatsJSContext(nats);
            var queue = await nats.SubscribeCoreAsync<string>("mix.*", queueGroup: "mixers");
            natsMember = Task.Run(async () =>
            {
                await foreach (var msg in queue.Msgs.ReadAllAsync(stop.Token))
                {
                    all.Writer.TryWrite(("nats", msg.Data!, MqttQualityOfServiceLevel.AtMostOnce));
                }
            });
            await nats.PingAsync();
        }
        var members = new List<IMqttClient>();
        try
        {
            foreach (var (name, qos) in new[] { ("q1", MqttQualityOfServiceLevel.AtLeastOnce), ("q0", MqttQualityOfServiceLevel.AtMostOnce) })
            {
                var client = await ConnectAsync(broker, "mix-" + name);
                members.Add(client);
                client.ApplicationMessageReceivedAsync += e =>
                {
                    all.Writer.TryWrite((name, e.ApplicationMessage.ConvertPayloadToString(), e.ApplicationMessage.QualityOfServiceLevel));
                    return Task.CompletedTask;
                };
                await client.SubscribeAsync("$share/mixers/mix/+", qos);
            }
            using var publisher = await ConnectAsync(broker, "mix-pub");
            const int count = 150;
            for (var i = 0; i < count; i++)
            {
                await PublishQos1Async(publisher, "mix/j", Text(i));
            }
            var seen = new List<(string Member, string Payload, MqttQualityOfServiceLevel Qos)>();
            for (var i = 0; i < count; i++)
            {
                seen.Add(await all.Reader.ReadAsync().AsTask().WaitAsync(Wait));
            }
            if (js is not null)
            {
                // Interest retention: once $MQTT_msgs is empty, the group's consumer has sent or settled every stored copy.
                var watch = System.Diagnostics.Stopwatch.StartNew();
                while ((await js.GetStreamAsync("$MQTT_msgs")).Info.State.Messages != 0)
                {
                    if (watch.Elapsed > Wait)
                    {
                        var stream = await js.GetStreamAsync("$MQTT_msgs");
                        var info = "";
                        foreach (var name in await SharedConsumersAsync(js))
                        {
                            var c = await js.GetConsumerAsync("$MQTT_msgs", name);
                            info += $"{name} pending {c.Info.NumPending} ackpending {c.Info.NumAckPending} redelivered {c.Info.NumRedelivered} delivered {c.Info.Delivered.StreamSeq} acked {c.Info.AckFloor.StreamSeq}; ";
                        }
                        Assert.Fail($"stream {stream.Info.State.Messages} msgs first {stream.Info.State.FirstSeq} last {stream.Info.State.LastSeq}; seen {seen.Count}; {info}");
                    }
                    await Task.Delay(50);
                }
            }
            // A last message to each MQTT member on a topic of its own comes after anything still queued for it.
            foreach (var (client, i) in members.Select((c, i) => (c, i)))
            {
                await client.SubscribeAsync("mixend/" + Text(i), MqttQualityOfServiceLevel.AtLeastOnce);
                await PublishQos1Async(publisher, "mixend/" + Text(i), "end");
            }
            var ends = 0;
            while (ends < members.Count)
            {
                var next = await all.Reader.ReadAsync().AsTask().WaitAsync(Wait);
                if (next.Payload == "end")
                {
                    ends++;
                }
                else
                {
                    seen.Add(next);
                }
            }
            Assert.Equal(Enumerable.Range(0, count).Select(Text).Order(StringComparer.Ordinal), seen.Select(s => s.Payload).Order(StringComparer.Ordinal));
            Assert.All(seen, s => Assert.Equal(s.Member == "q1" ? MqttQualityOfServiceLevel.AtLeastOnce : MqttQualityOfServiceLevel.AtMostOnce, s.Qos));
            // Every member takes a share (each of 150 draws goes to any of them).
            Assert.Equal(nats is null ? ["q0", "q1"] : ["nats", "q0", "q1"], seen.Select(s => s.Member).Distinct().Order(StringComparer.Ordinal));
        }
        finally
        {
            foreach (var member in members)
            {
                member.Dispose();
            }
            await stop.CancelAsync();
            if (natsMember is not null)
            {
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => natsMember);
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
