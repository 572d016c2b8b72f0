using System.Text;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// The same hand-built MQTT packets against Go 2.9.10 and ours: both must answer with the same bytes
/// (CONNACK, SUBACK, PINGRESP, PUBACK, PUBLISH) and close on the same bad input.
/// </summary>
public sealed class MqttProtocolDifferentialTests
{
    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Connect_subscribe_ping_and_publish_both_ways_answer_with_Gos_bytes(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        await using var mqtt = await MqttRawClient.ConnectAsync(server.MqttPort);

        await mqtt.SendAsync(MqttRawClient.Connect("raw1"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await mqtt.ReadAsync(4));

        // a/+ (QoS 0), b/# (QoS 1 granted), a/#/c (not a valid subject: refused with 0x80).
        var subscribe = MqttRawClient.Packet(0x82, [0, 9,
            0, 3, (byte)'a', (byte)'/', (byte)'+', 0,
            0, 3, (byte)'b', (byte)'/', (byte)'#', 1,
            0, 5, (byte)'a', (byte)'/', (byte)'#', (byte)'/', (byte)'c', 0]);
        await mqtt.SendAsync(subscribe);
        Assert.Equal(new byte[] { 0x90, 5, 0, 9, 0, 1, 0x80 }, await mqtt.ReadAsync(7));

        await mqtt.SendAsync(0xc0, 0);
        Assert.Equal(new byte[] { 0xd0, 0 }, await mqtt.ReadAsync(2));

        // NATS -> MQTT: a.x arrives as topic a/x, QoS 0, no retain.
        await nats.PublishAsync("a.x", Encoding.UTF8.GetBytes("hi"));
        Assert.Equal(new byte[] { 0x30, 7, 0, 3, (byte)'a', (byte)'/', (byte)'x', (byte)'h', (byte)'i' }, await mqtt.ReadAsync(9));

        // b/# also matches b itself (the extra parent-level subscription Go adds).
        await nats.PublishAsync("b", Encoding.UTF8.GetBytes("p"));
        Assert.Equal(new byte[] { 0x30, 4, 0, 1, (byte)'b', (byte)'p' }, await mqtt.ReadAsync(6));

        // MQTT -> NATS: QoS 1 publish is acknowledged and carries Go's Nmqtt-Pub header.
        var received = new TaskCompletionSource<NatsMsg<byte[]>>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("z.>");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                received.TrySetResult(msg);
            }
        });
        await nats.PingAsync();
        await mqtt.SendAsync(MqttRawClient.Publish("z/y", "v", qos: 1, packetId: 7));
        Assert.Equal(new byte[] { 0x40, 2, 0, 7 }, await mqtt.ReadAsync(4));
        var message = await received.Task.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal("z.y", message.Subject);
        Assert.Equal("v", Encoding.UTF8.GetString(message.Data!));
        Assert.Equal("1", message.Headers?["Nmqtt-Pub"].ToString());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Topics_with_empty_levels_map_to_subjects_as_Go_maps_them(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        await using var mqtt = await MqttRawClient.ConnectAsync(server.MqttPort);
        await mqtt.SendAsync(MqttRawClient.Connect("raw2"));
        await mqtt.ReadAsync(4);

        var subjects = new List<string>();
        var all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var sub = await nats.SubscribeCoreAsync<byte[]>(">");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                if (msg.Subject.StartsWith('$'))
                {
                    continue;
                }
                lock (subjects)
                {
                    subjects.Add(msg.Subject);
                    if (subjects.Count == 4)
                    {
                        all.TrySetResult();
                    }
                }
            }
        });
        await nats.PingAsync();
        foreach (var topic in new[] { "/a", "a//b", "a/", "a/b/c" })
        {
            await mqtt.SendAsync(MqttRawClient.Publish(topic, "x"));
        }
        await all.Task.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(["/.a", "a./.b", "a./", "a.b.c"], subjects);
    }

    public static TheoryData<string, string> BadInputs()
    {
        var data = new TheoryData<string, string>();
        foreach (var kind in new[] { "go", "ours" })
        {
            foreach (var name in new[] { "malformed-length", "unknown-type", "second-connect", "first-not-connect", "dot-in-topic", "wildcard-publish", "qos3-subscribe", "bad-utf8-filter", "old-protocol" })
            {
                data.Add(kind, name);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(BadInputs))]
    public async Task Bad_input_closes_that_connection_only(string kind, string name)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var bystander = await MqttRawClient.ConnectAsync(server.MqttPort);
        await bystander.SendAsync(MqttRawClient.Connect("bystander"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await bystander.ReadAsync(4));

        await using var bad = await MqttRawClient.ConnectAsync(server.MqttPort);
        if (name is not "first-not-connect" and not "old-protocol")
        {
            await bad.SendAsync(MqttRawClient.Connect("bad"));
            Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await bad.ReadAsync(4));
        }
        byte[] input = name switch
        {
            "malformed-length" => [0x30, 0xff, 0xff, 0xff, 0xff, 0x01],
            "unknown-type" => [0xf0, 0],
            "second-connect" => MqttRawClient.Connect("bad"),
            "first-not-connect" => MqttRawClient.Publish("a", "b"),
            "dot-in-topic" => MqttRawClient.Publish("a.b", "x"),
            "wildcard-publish" => MqttRawClient.Publish("a/+", "x"),
            "qos3-subscribe" => MqttRawClient.Subscribe(1, "a", 3),
            "bad-utf8-filter" => MqttRawClient.SubscribeRaw(1, [0xff, 0xfe], 0),
            "old-protocol" => MqttRawClient.Connect("old", protocol: "MQIsdp", level: 3),
            _ => throw new ArgumentOutOfRangeException(nameof(name)),
        };
        await bad.SendAsync(input);
        Assert.True(await bad.WaitClosedAsync(), $"{kind}: {name} did not close the connection");

        // The other client still works.
        await bystander.SendAsync(0xc0, 0);
        Assert.Equal(new byte[] { 0xd0, 0 }, await bystander.ReadAsync(2));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Connack_codes_for_protocol_level_and_empty_client_id_without_clean_session(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using (var level = await MqttRawClient.ConnectAsync(server.MqttPort))
        {
            await level.SendAsync(MqttRawClient.Connect("x", level: 6));
            Assert.Equal(new byte[] { 0x20, 2, 0, 1 }, await level.ReadAsync(4));
            Assert.True(await level.WaitClosedAsync());
        }
        await using (var empty = await MqttRawClient.ConnectAsync(server.MqttPort))
        {
            await empty.SendAsync(MqttRawClient.Connect("", clean: false));
            Assert.Equal(new byte[] { 0x20, 2, 0, 2 }, await empty.ReadAsync(4));
            Assert.True(await empty.WaitClosedAsync());
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Mqtt_authorization_block_refuses_bad_password_with_connack_5(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "authorization { username: dev, password: pwd }");
        await using (var wrong = await MqttRawClient.ConnectAsync(server.MqttPort))
        {
            await wrong.SendAsync(MqttRawClient.Connect("a", user: "dev", password: "nope"));
            Assert.Equal(new byte[] { 0x20, 2, 0, 5 }, await wrong.ReadAsync(4));
            Assert.True(await wrong.WaitClosedAsync());
        }
        await using var right = await MqttRawClient.ConnectAsync(server.MqttPort);
        await right.SendAsync(MqttRawClient.Connect("b", user: "dev", password: "pwd"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await right.ReadAsync(4));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Will_is_published_on_abnormal_close_but_not_after_disconnect(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        var wills = System.Threading.Channels.Channel.CreateUnbounded<string>();
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("will.>");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                await wills.Writer.WriteAsync(msg.Subject + "=" + Encoding.UTF8.GetString(msg.Data ?? []));
            }
        });
        await nats.PingAsync();

        var polite = await MqttRawClient.ConnectAsync(server.MqttPort);
        await polite.SendAsync(MqttRawClient.Connect("polite", willTopic: "will/polite", willMessage: "gone"));
        await polite.ReadAsync(4);
        await polite.SendAsync(0xe0, 0);
        Assert.True(await polite.WaitClosedAsync());
        await polite.DisposeAsync();

        var rude = await MqttRawClient.ConnectAsync(server.MqttPort);
        await rude.SendAsync(MqttRawClient.Connect("rude", willTopic: "will/rude", willMessage: "lost"));
        await rude.ReadAsync(4);
        rude.Abort();

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        Assert.Equal("will.rude=lost", await wills.Reader.ReadAsync(cts.Token));
        await nats.PingAsync();
        Assert.False(wills.Reader.TryRead(out var extra), $"unexpected will {extra}");
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Unacknowledged_qos1_message_is_redelivered_with_dup_after_ack_wait(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "ack_wait: \"1s\"");
        await using var subscriber = await MqttRawClient.ConnectAsync(server.MqttPort);
        await subscriber.SendAsync(MqttRawClient.Connect("redeliver"));
        await subscriber.ReadAsync(4);
        await subscriber.SendAsync(MqttRawClient.Subscribe(3, "r/x", 1));
        Assert.Equal(new byte[] { 0x90, 3, 0, 3, 1 }, await subscriber.ReadAsync(5));

        await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
        await publisher.SendAsync(MqttRawClient.Connect("redeliver-pub"));
        await publisher.ReadAsync(4);
        await publisher.SendAsync(MqttRawClient.Publish("r/x", "v", qos: 1, packetId: 1));
        Assert.Equal(new byte[] { 0x40, 2, 0, 1 }, await publisher.ReadAsync(4));

        var first = await subscriber.ReadAsync(10);
        Assert.Equal(new byte[] { 0x32, 8, 0, 3, (byte)'r', (byte)'/', (byte)'x' }, first[..7]);
        Assert.Equal((byte)'v', first[9]);
        var again = await subscriber.ReadAsync(10);
        Assert.Equal((byte)0x3a, again[0]);
        Assert.Equal(first[1..], again[1..]);
        await subscriber.SendAsync(0x40, 2, first[7], first[8]);
        await subscriber.SendAsync(0xc0, 0);
        // Redeliveries that raced the PUBACK may come first; then the PINGRESP, and nothing after the ack.
        var next = (await subscriber.ReadAsync(1))[0];
        while (next == 0x3a)
        {
            await subscriber.ReadAsync(9);
            next = (await subscriber.ReadAsync(1))[0];
        }
        var last = (await subscriber.ReadAsync(1))[0];
        Assert.Equal(new byte[] { 0xd0, 0 }, new[] { next, last });
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Silent_client_is_closed_after_one_and_a_half_keep_alives_and_its_will_published(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        var will = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("ka.will");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                will.TrySetResult(Encoding.UTF8.GetString(msg.Data ?? []));
            }
        });
        await nats.PingAsync();
        await using var silent = await MqttRawClient.ConnectAsync(server.MqttPort);
        await silent.SendAsync(MqttRawClient.Connect("silent", keepAlive: 1, willTopic: "ka/will", willMessage: "timed-out"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await silent.ReadAsync(4));
        Assert.True(await silent.WaitClosedAsync());
        Assert.Equal("timed-out", await will.Task.WaitAsync(TimeSpan.FromSeconds(20)));
    }
}
