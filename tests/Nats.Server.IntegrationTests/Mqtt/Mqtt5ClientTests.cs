using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Packets;
using MQTTnet.Protocol;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTTnet 5 speaking MQTT 5 to ours (and, where the specification leaves room, to mosquitto for comparison).</summary>
public sealed class Mqtt5ClientTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    public static TheoryData<string> Brokers => new() { "ours", "mosquitto" };

    [Fact]
    public async Task Connack_carries_the_servers_limits_and_an_assigned_client_id()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        using var client = new MqttClientFactory().CreateMqttClient();
        var result = await client.ConnectAsync(Options(broker, "").Build());
        Assert.Equal(MqttClientConnectResultCode.Success, result.ResultCode);
        Assert.False(string.IsNullOrEmpty(result.AssignedClientIdentifier));
        Assert.Equal(64, result.TopicAliasMaximum);
        Assert.True(result.SharedSubscriptionAvailable);
        Assert.True(result.SubscriptionIdentifiersAvailable);
        Assert.False(result.IsSessionPresent);
        await client.DisconnectAsync();
    }

    [Fact]
    public async Task Mqtt5_mqtt311_and_nats_share_topics_with_properties_as_headers()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        using var v5 = await ConnectAsync(broker, "v5-both");
        using var v311 = new MqttClientFactory().CreateMqttClient();
        await v311.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.Port).WithClientId("v311-both")
            .WithProtocolVersion(MqttProtocolVersion.V311).Build());
        var v5Inbox = Inbox(v5);
        var v311Inbox = Inbox(v311);
        await v5.SubscribeAsync("mixed/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await v311.SubscribeAsync("mixed/#", MqttQualityOfServiceLevel.AtLeastOnce);
        var natsInbox = await NatsInboxAsync(nats, "mixed.>");

        // MQTT 5 -> MQTT 3.1.1, MQTT 5 and NATS (user properties and content type as headers).
        var ack = await v5.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("mixed/a").WithPayload("one")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).WithUserProperty("unit", Encoding.UTF8.GetBytes("C")).WithUserProperty("site", Encoding.UTF8.GetBytes("north"))
            .WithContentType("text/plain").WithPayloadFormatIndicator(MqttPayloadFormatIndicator.CharacterData).Build());
        Assert.True(ack.IsSuccess);
        var atNats = await natsInbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("mixed.a", "one"), (atNats.Subject, Encoding.UTF8.GetString(atNats.Data!)));
        Assert.Equal(("C", "north", "text/plain", "1"), (atNats.Headers?["unit"].ToString(), atNats.Headers?["site"].ToString(),
            atNats.Headers?["Content-Type"].ToString(), atNats.Headers?["Nmqtt-Pub"].ToString()));
        var at311 = await v311Inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("mixed/a", "one", MqttQualityOfServiceLevel.AtLeastOnce), (at311.Topic, at311.ConvertPayloadToString(), at311.QualityOfServiceLevel));
        var at5 = await v5Inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("mixed/a", "one", "text/plain"), (at5.Topic, at5.ConvertPayloadToString(), at5.ContentType));
        Assert.Equal(MqttPayloadFormatIndicator.CharacterData, at5.PayloadFormatIndicator);
        Assert.Equal(["unit=C", "site=north"], at5.UserProperties!.Select(p => p.Name + "=" + p.ReadValueAsString()));

        // NATS headers -> MQTT 5 user properties; MQTT 3.1.1 -> MQTT 5.
        var headers = new NatsHeaders { ["trace"] = "abc", ["Content-Type"] = "application/json" };
        await nats.PublishAsync("mixed.b", Encoding.UTF8.GetBytes("{}"), headers);
        var fromNats = await v5Inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("mixed/b", "{}", "application/json"), (fromNats.Topic, fromNats.ConvertPayloadToString(), fromNats.ContentType));
        Assert.Equal(["trace=abc"], fromNats.UserProperties!.Select(p => p.Name + "=" + p.ReadValueAsString()));
        await v311Inbox.ReadAsync().AsTask().WaitAsync(Wait);
        await v311.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("mixed/c").WithPayload("old").Build());
        var from311 = await v5Inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("mixed/c", "old"), (from311.Topic, from311.ConvertPayloadToString()));
        Assert.True(from311.UserProperties is null or { Count: 0 });
    }

    [Theory]
    [MemberData(nameof(Brokers))]
    public async Task Request_response_between_mqtt5_clients_keeps_correlation_data_and_properties(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        using var requester = await ConnectAsync(broker, "rr-requester");
        using var responder = await ConnectAsync(broker, "rr-responder");
        responder.ApplicationMessageReceivedAsync += async e =>
        {
            var request = e.ApplicationMessage;
            await responder.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(request.ResponseTopic).WithPayload("pong:" + request.ConvertPayloadToString())
                .WithCorrelationData(request.CorrelationData).WithUserProperty("by", Encoding.UTF8.GetBytes("responder")).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        };
        await responder.SubscribeAsync("svc/ping", MqttQualityOfServiceLevel.AtLeastOnce);
        var replies = Inbox(requester);
        await requester.SubscribeAsync("replies/rr-requester", MqttQualityOfServiceLevel.AtLeastOnce);
        await requester.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("svc/ping").WithPayload("1").WithResponseTopic("replies/rr-requester")
            .WithCorrelationData([1, 2, 3, 250]).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        var reply = await replies.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("replies/rr-requester", "pong:1"), (reply.Topic, reply.ConvertPayloadToString()));
        Assert.Equal([1, 2, 3, 250], reply.CorrelationData);
        Assert.Equal(["by=responder"], reply.UserProperties!.Select(p => p.Name + "=" + p.ReadValueAsString()));
    }

    [Fact]
    public async Task Nats_request_reply_reaches_mqtt5_responders_and_requesters()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        using var responder = await ConnectAsync(broker, "nats-rr-responder");
        responder.ApplicationMessageReceivedAsync += async e =>
        {
            var request = e.ApplicationMessage;
            await responder.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(request.ResponseTopic).WithPayload("echo:" + request.ConvertPayloadToString()).Build());
        };
        await responder.SubscribeAsync("svc/echo");
        var answer = await nats.RequestAsync<byte[], byte[]>("svc.echo", Encoding.UTF8.GetBytes("hi"), replyOpts: new NatsSubOpts { Timeout = Wait });
        Assert.Equal("echo:hi", Encoding.UTF8.GetString(answer.Data!));

        // An MQTT 5 requester: its response topic is the NATS reply subject a NATS responder answers.
        await using var service = await nats.SubscribeCoreAsync<byte[]>("svc.time");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in service.Msgs.ReadAllAsync())
            {
                await msg.ReplyAsync(Encoding.UTF8.GetBytes("noon:" + msg.ReplyTo));
            }
        });
        await nats.PingAsync();
        using var requester = await ConnectAsync(broker, "nats-rr-requester");
        var replies = Inbox(requester);
        await requester.SubscribeAsync("time/answer");
        await requester.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("svc/time").WithPayload("?").WithResponseTopic("time/answer").Build());
        var reply = await replies.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("time/answer", "noon:time.answer"), (reply.Topic, reply.ConvertPayloadToString()));
    }

    [Theory]
    [MemberData(nameof(Brokers))]
    public async Task Subscription_options_no_local_retain_as_published_retain_handling_and_identifiers(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        using var client = await ConnectAsync(broker, "opts-" + kind);
        var inbox = Inbox(client);
        await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("opt/kept").WithPayload("r1").WithRetainFlag()
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());

        // Retain handling 2: no retained message; no local: our own publish is not echoed.
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic("opt/#").WithNoLocal()
            .WithRetainHandling(MqttRetainHandling.DoNotSendOnSubscribe)).Build());
        using var other = await ConnectAsync(broker, "opts-other-" + kind);
        await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("opt/self").WithPayload("mine").Build());
        await other.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("opt/live").WithPayload("theirs").WithRetainFlag().Build());
        var first = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        // Without retain as published the live copy of a retained publish has the flag cleared.
        Assert.Equal(("opt/live", "theirs", false), (first.Topic, first.ConvertPayloadToString(), first.Retain));

        // Retain handling 1 on an existing subscription: nothing; on a new one: the retained message, with its identifier.
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic("opt/#").WithNoLocal()
            .WithRetainHandling(MqttRetainHandling.SendAtSubscribeIfNewSubscriptionOnly)).Build());
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithSubscriptionIdentifier(7).WithTopicFilter(f => f.WithTopic("opt/kept")
            .WithRetainAsPublished().WithRetainHandling(MqttRetainHandling.SendAtSubscribeIfNewSubscriptionOnly)).Build());
        var retained = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("opt/kept", "r1", true), (retained.Topic, retained.ConvertPayloadToString(), retained.Retain));
        Assert.Equal([7u], retained.SubscriptionIdentifiers);

        // Retain as published keeps the flag on a live retained publish.
        await other.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("opt/kept").WithPayload("r2").WithRetainFlag().Build());
        var live = new List<MqttApplicationMessage> { await inbox.ReadAsync().AsTask().WaitAsync(Wait), await inbox.ReadAsync().AsTask().WaitAsync(Wait) };
        var viaKept = Assert.Single(live, m => m.SubscriptionIdentifiers?.Contains(7u) == true);
        Assert.Equal(("opt/kept", "r2", true), (viaKept.Topic, viaKept.ConvertPayloadToString(), viaKept.Retain));
        var viaWildcard = Assert.Single(live, m => m.SubscriptionIdentifiers is null or { Count: 0 });
        Assert.False(viaWildcard.Retain);

        var unsubscribed = await client.UnsubscribeAsync(new MqttClientUnsubscribeOptionsBuilder().WithTopicFilter("opt/kept").WithTopicFilter("never/subscribed").Build());
        Assert.Equal([MqttClientUnsubscribeResultCode.Success, MqttClientUnsubscribeResultCode.NoSubscriptionExisted], unsubscribed.Items.Select(i => i.ResultCode));
    }

    [Theory]
    [MemberData(nameof(Brokers))]
    public async Task Shared_subscription_members_each_get_a_share(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        using var a = await ConnectAsync(broker, "share-a");
        using var b = await ConnectAsync(broker, "share-b");
        var all = Channel.CreateUnbounded<string>();
        foreach (var (client, name) in new[] { (a, "a"), (b, "b") })
        {
            client.ApplicationMessageReceivedAsync += e =>
            {
                all.Writer.TryWrite(name + ":" + e.ApplicationMessage.ConvertPayloadToString());
                return Task.CompletedTask;
            };
            var granted = await client.SubscribeAsync("$share/workers/jobs/+");
            Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, granted.Items.Single().ResultCode);
        }
        using var publisher = await ConnectAsync(broker, "share-pub");
        const int count = 40;
        for (var i = 0; i < count; i++)
        {
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("jobs/j").WithPayload(i.ToString(System.Globalization.CultureInfo.InvariantCulture)).Build());
        }
        var seen = new List<string>();
        for (var i = 0; i < count; i++)
        {
            seen.Add(await all.Reader.ReadAsync().AsTask().WaitAsync(Wait));
        }
        // Every message exactly once across the group.
        Assert.Equal(Enumerable.Range(0, count).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture)).Order(), seen.Select(s => s[2..]).Order());
    }

    [Fact]
    public async Task Shared_subscription_is_a_nats_queue_group_mqtt_and_nats_members_share_the_work()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        using var mqtt = await ConnectAsync(broker, "share-mixed");
        var got = Channel.CreateUnbounded<string>();
        mqtt.ApplicationMessageReceivedAsync += e =>
        {
            got.Writer.TryWrite("mqtt");
            return Task.CompletedTask;
        };
        await mqtt.SubscribeAsync("$share/pool/work/+");
        await using var queue = await nats.SubscribeCoreAsync<byte[]>("work.*", queueGroup: "pool");
        _ = Task.Run(async () =>
        {
            await foreach (var _ in queue.Msgs.ReadAllAsync())
            {
                got.Writer.TryWrite("nats");
            }
        });
        await nats.PingAsync();
        const int count = 200;
        for (var i = 0; i < count; i++)
        {
            await nats.PublishAsync("work.item", Encoding.UTF8.GetBytes("x"));
        }
        var receivers = new List<string>();
        for (var i = 0; i < count; i++)
        {
            receivers.Add(await got.Reader.ReadAsync().AsTask().WaitAsync(Wait));
        }
        Assert.Contains("mqtt", receivers);
        Assert.Contains("nats", receivers);
        await nats.PingAsync();
        Assert.False(got.Reader.TryRead(out _));
    }

    [Fact]
    public async Task Session_expiry_keeps_the_session_then_drops_it_from_jetstream()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            var first = await client.ConnectAsync(Options(broker, "expiring").WithCleanStart(false).WithSessionExpiryInterval(300).Build());
            Assert.False(first.IsSessionPresent);
            await client.SubscribeAsync("exp/q", MqttQualityOfServiceLevel.AtLeastOnce);
            await client.DisconnectAsync();
        }
        // Published once the session is detached: a delivery racing the DISCONNECT would wait for ack_wait (as in Go).
        await broker.WaitForMqttConnectionsAsync(0);
        // Queued while away: the session holds it.
        using (var publisher = await ConnectAsync(broker, "expiring-pub"))
        {
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("exp/q").WithPayload("queued").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        }
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            var inbox = Inbox(client);
            var again = await client.ConnectAsync(Options(broker, "expiring").WithCleanStart(false).WithSessionExpiryInterval(1).Build());
            Assert.True(again.IsSessionPresent);
            Assert.Equal("queued", (await inbox.ReadAsync().AsTask().WaitAsync(Wait)).ConvertPayloadToString());
            await client.DisconnectAsync();
        }
        Assert.Equal(1, await SessionRecordsAsync(nats));
        // One second after the disconnect the session and its record in $MQTT_sess are gone.
        while (await SessionRecordsAsync(nats) != 0)
        {
            await Task.Delay(100);
        }
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            var last = await client.ConnectAsync(Options(broker, "expiring").WithCleanStart(false).WithSessionExpiryInterval(0).Build());
            Assert.False(last.IsSessionPresent);
        }
    }

    [Fact]
    public async Task Will_waits_for_its_delay_and_disconnect_with_will_sends_it()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        var wills = await NatsInboxAsync(nats, "wills.>");
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            await client.ConnectAsync(Options(broker, "willing").WithWillTopic("wills/one").WithWillPayload("gone").WithWillDelayInterval(1)
                .WithWillContentType("text/plain").WithSessionExpiryInterval(60).Build());
            var watch = System.Diagnostics.Stopwatch.StartNew();
            await client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build());
            var will = await wills.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(900), $"will after {watch.Elapsed}");
            Assert.Equal(("wills.one", "gone", "text/plain"), (will.Subject, Encoding.UTF8.GetString(will.Data!), will.Headers?["Content-Type"].ToString()));
        }
        // A normal DISCONNECT discards the will; the next will (no delay) is the only one that arrives.
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            await client.ConnectAsync(Options(broker, "willing2").WithWillTopic("wills/two").WithWillPayload("no").Build());
            await client.DisconnectAsync();
        }
        using (var client = new MqttClientFactory().CreateMqttClient())
        {
            await client.ConnectAsync(Options(broker, "willing3").WithWillTopic("wills/three").WithWillPayload("yes").Build());
            await client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build());
        }
        Assert.Equal("wills.three", (await wills.ReadAsync().AsTask().WaitAsync(Wait)).Subject);
    }

    [Fact]
    public async Task Message_expiry_drops_expired_retained_and_counts_down_for_subscribers()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        using var publisher = await ConnectAsync(broker, "expiry-pub");
        await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("ttl/short").WithPayload("brief").WithRetainFlag().WithMessageExpiryInterval(1)
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("ttl/long").WithPayload("lasting").WithRetainFlag().WithMessageExpiryInterval(3600)
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        var firstRound = await RetainedAsync(broker, "ttl-sub-1");
        Assert.Equal(["ttl/long", "ttl/short"], firstRound.Select(m => m.Topic).Order());
        Assert.All(firstRound, m => Assert.InRange(m.MessageExpiryInterval, 1u, 3600u));
        // Retained messages of one SUBSCRIBE come in filter order, so ttl/long arriving means ttl/short was not sent.
        while ((await RetainedAsync(broker, "ttl-sub-2")).Count != 1)
        {
            await Task.Delay(100);
        }
    }

    [Fact]
    public async Task Topic_aliases_from_the_client_resolve()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        using var subscriber = await ConnectAsync(broker, "alias-sub");
        var inbox = Inbox(subscriber);
        await subscriber.SubscribeAsync("alias/#");
        using var publisher = await ConnectAsync(broker, "alias-pub");
        await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("alias/long/topic").WithTopicAlias(3).WithPayload("1").Build());
        await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("").WithTopicAlias(3).WithPayload("2").Build());
        Assert.Equal(("alias/long/topic", "1"), Read(await inbox.ReadAsync().AsTask().WaitAsync(Wait)));
        Assert.Equal(("alias/long/topic", "2"), Read(await inbox.ReadAsync().AsTask().WaitAsync(Wait)));

        static (string, string) Read(MqttApplicationMessage m) => (m.Topic, m.ConvertPayloadToString());
    }

    [Fact]
    public async Task Nothing_over_the_clients_maximum_packet_size_is_sent_and_receive_maximum_bounds_inflight()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        using var client = new MqttClientFactory().CreateMqttClient();
        var inbox = Inbox(client);
        await client.ConnectAsync(Options(broker, "small").WithMaximumPacketSize(200).Build());
        await client.SubscribeAsync("size/+", MqttQualityOfServiceLevel.AtLeastOnce);
        await nats.PublishAsync("size.big", new byte[500]);
        using (var publisher = await ConnectAsync(broker, "size-pub"))
        {
            await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("size/big1").WithPayload(new byte[500]).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        }
        await nats.PublishAsync("size.small", "ok"u8.ToArray());
        var only = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal("size/small", only.Topic);
        Assert.True(client.IsConnected);
    }

    [Fact]
    public async Task Takeover_disconnects_the_old_client_with_0x8E()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        using var first = new MqttClientFactory().CreateMqttClient();
        var reason = new TaskCompletionSource<MqttClientDisconnectReason>(TaskCreationOptions.RunContinuationsAsynchronously);
        first.DisconnectedAsync += e =>
        {
            reason.TrySetResult(e.Reason);
            return Task.CompletedTask;
        };
        await first.ConnectAsync(Options(broker, "twin").Build());
        using var second = await ConnectAsync(broker, "twin");
        Assert.Equal(MqttClientDisconnectReason.SessionTakenOver, await reason.Task.WaitAsync(Wait));
    }

    /// <summary>The retained messages a fresh subscription to ttl/short then ttl/long gets, up to ttl/long's.</summary>
    private static async Task<List<MqttApplicationMessage>> RetainedAsync(Mqtt5Broker broker, string clientId)
    {
        using var client = await ConnectAsync(broker, clientId);
        var inbox = Inbox(client);
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter("ttl/short").WithTopicFilter("ttl/long").Build());
        var got = new List<MqttApplicationMessage>();
        while (got.LastOrDefault()?.Topic != "ttl/long")
        {
            got.Add(await inbox.ReadAsync().AsTask().WaitAsync(Wait));
        }
        await client.DisconnectAsync();
        return got;
    }

    private static async Task<long> SessionRecordsAsync(NatsConnection nats)
    {
        var info = await nats.RequestAsync<byte[], byte[]>("$JS.API.STREAM.INFO.$MQTT_sess", [], replyOpts: new NatsSubOpts { Timeout = Wait });
        using var json = System.Text.Json.JsonDocument.Parse(info.Data!);
        return json.RootElement.GetProperty("state").GetProperty("messages").GetInt64();
    }

    private static async Task<ChannelReader<NatsMsg<byte[]>>> NatsInboxAsync(NatsConnection nats, string subject)
    {
        var channel = Channel.CreateUnbounded<NatsMsg<byte[]>>();
        var sub = await nats.SubscribeCoreAsync<byte[]>(subject);
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                await channel.Writer.WriteAsync(msg);
            }
        });
        await nats.PingAsync();
        return channel.Reader;
    }

    internal static MqttClientOptionsBuilder Options(Mqtt5Broker broker, string clientId) =>
        new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.Port).WithClientId(clientId).WithProtocolVersion(MqttProtocolVersion.V500)
            .WithTimeout(Wait);

    private static async Task<IMqttClient> ConnectAsync(Mqtt5Broker broker, string clientId)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(Options(broker, clientId).Build());
        return client;
    }
}
