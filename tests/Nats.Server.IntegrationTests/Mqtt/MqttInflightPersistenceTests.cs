using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// QoS 1/2 state kept in JetStream as Go keeps it: messages for an offline persistent session and
/// unacknowledged deliveries survive a server restart (redelivered with DUP), QoS 2 stays exactly-once
/// across a restart, and the session record is Go's mqttPersistedSession under Go's subject.
/// </summary>
public sealed class MqttInflightPersistenceTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Qos1_messages_published_while_a_persistent_session_is_away_arrive_after_a_server_restart(string kind)
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-offline-").FullName;
        try
        {
            await using (var first = await MqttTestServer.StartAsync(kind, storeDir: storeDir))
            {
                using (var subscriber = await ConnectAsync(first, "net-offline", clean: false))
                {
                    await subscriber.SubscribeAsync("jobs/#", MqttQualityOfServiceLevel.AtLeastOnce);
                    await subscriber.DisconnectAsync();
                }
                using var publisher = await ConnectAsync(first, "net-offline-pub");
                for (var i = 1; i <= 3; i++)
                {
                    var ack = await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic($"jobs/{i}").WithPayload($"job-{i}")
                        .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
                    Assert.True(ack.IsSuccess);
                }
                await publisher.DisconnectAsync();
            }
            await using var second = await MqttTestServer.StartAsync(kind, storeDir: storeDir);
            using var again = new MqttClientFactory().CreateMqttClient();
            var received = Inbox(again);
            var result = await again.ConnectAsync(Options(second, "net-offline", clean: false));
            Assert.True(result.IsSessionPresent);
            var got = new List<string>();
            for (var i = 0; i < 3; i++)
            {
                var message = await received.ReadAsync().AsTask().WaitAsync(Wait);
                Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, message.QualityOfServiceLevel);
                got.Add(message.Topic + "=" + message.ConvertPayloadToString());
            }
            Assert.Equal(["jobs/1=job-1", "jobs/2=job-2", "jobs/3=job-3"], got);
            await again.DisconnectAsync();
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Unacknowledged_qos1_delivery_is_redelivered_with_dup_after_a_server_restart(string kind)
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-dup-").FullName;
        try
        {
            byte[] first;
            await using (var server = await MqttTestServer.StartAsync(kind, "ack_wait: \"1s\"", storeDir))
            {
                await using var subscriber = await MqttRawClient.ConnectAsync(server.MqttPort);
                await subscriber.SendAsync(MqttRawClient.Connect("dup-restart", clean: false));
                await subscriber.ReadAsync(4);
                await subscriber.SendAsync(MqttRawClient.Subscribe(1, "d/x", 1));
                Assert.Equal(new byte[] { 0x90, 3, 0, 1, 1 }, await subscriber.ReadAsync(5));
                await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
                await publisher.SendAsync(MqttRawClient.Connect("dup-restart-pub"));
                await publisher.ReadAsync(4);
                await publisher.SendAsync(MqttRawClient.Publish("d/x", "v", qos: 1, packetId: 1));
                Assert.Equal(new byte[] { 0x40, 2, 0, 1 }, await publisher.ReadAsync(4));
                first = await subscriber.ReadAsync(10);
                Assert.Equal(new byte[] { 0x32, 8, 0, 3, (byte)'d', (byte)'/', (byte)'x' }, first[..7]);
                // Not acknowledged: the server goes down with the delivery in flight.
                subscriber.Abort();
            }
            await using var restarted = await MqttTestServer.StartAsync(kind, "ack_wait: \"1s\"", storeDir);
            await using var again = await MqttRawClient.ConnectAsync(restarted.MqttPort);
            await again.SendAsync(MqttRawClient.Connect("dup-restart", clean: false));
            Assert.Equal(new byte[] { 0x20, 2, 1, 0 }, await again.ReadAsync(4));
            var redelivered = await again.ReadAsync(10);
            Assert.Equal((byte)0x3a, redelivered[0]);
            Assert.Equal(first[1..7], redelivered[1..7]);
            Assert.Equal((byte)'v', redelivered[9]);
            await again.SendAsync(0x40, 2, redelivered[7], redelivered[8]);
            await again.SendAsync(0xc0, 0);
            // Redeliveries that raced the PUBACK may come first; then the PINGRESP.
            var next = (await again.ReadAsync(1))[0];
            while (next == 0x3a)
            {
                await again.ReadAsync(9);
                next = (await again.ReadAsync(1))[0];
            }
            Assert.Equal(new byte[] { 0xd0, 0 }, new[] { next, (await again.ReadAsync(1))[0] });
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Qos2_publish_pending_pubrel_is_delivered_exactly_once_across_a_server_restart()
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-q2in-").FullName;
        try
        {
            await using (var server = await MqttTestServer.StartAsync("ours", storeDir: storeDir))
            {
                await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
                await publisher.SendAsync(MqttRawClient.Connect("q2-in-restart", clean: false));
                await publisher.ReadAsync(4);
                await publisher.SendAsync(MqttRawClient.Publish("q2r/a", "exactly", qos: 2, packetId: 9));
                Assert.Equal(new byte[] { 0x50, 2, 0, 9 }, await publisher.ReadAsync(4));
                publisher.Abort();
            }
            await using var restarted = await MqttTestServer.StartAsync("ours", storeDir: storeDir);
            await using var nats = new NatsConnection(new NatsOpts { Url = restarted.NatsUrl });
            var inbox = Channel.CreateUnbounded<NatsMsg<byte[]>>();
            await using var sub = await nats.SubscribeCoreAsync<byte[]>("q2r.>");
            _ = Task.Run(async () =>
            {
                await foreach (var msg in sub.Msgs.ReadAllAsync())
                {
                    await inbox.Writer.WriteAsync(msg);
                }
            });
            await nats.PingAsync();
            await using var again = await MqttRawClient.ConnectAsync(restarted.MqttPort);
            await again.SendAsync(MqttRawClient.Connect("q2-in-restart", clean: false));
            await again.ReadAsync(4);
            var resent = MqttRawClient.Publish("q2r/a", "exactly", qos: 2, packetId: 9);
            resent[0] |= 0x08;
            await again.SendAsync(resent);
            Assert.Equal(new byte[] { 0x50, 2, 0, 9 }, await again.ReadAsync(4));
            await again.SendAsync(0x62, 2, 0, 9);
            Assert.Equal(new byte[] { 0x70, 2, 0, 9 }, await again.ReadAsync(4));
            await again.SendAsync(0x62, 2, 0, 9);
            Assert.Equal(new byte[] { 0x70, 2, 0, 9 }, await again.ReadAsync(4));
            var message = await inbox.Reader.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.Equal(("q2r.a", "exactly"), (message.Subject, Encoding.UTF8.GetString(message.Data!)));
            await again.SendAsync(0xc0, 0);
            await again.ReadAsync(2);
            await nats.PingAsync();
            Assert.False(inbox.Reader.TryRead(out _));
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Qos2_subscriber_that_sent_pubrec_gets_the_pubrel_not_the_publish_after_a_server_restart()
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-q2out-").FullName;
        try
        {
            byte[] delivered;
            await using (var server = await MqttTestServer.StartAsync("ours", storeDir: storeDir))
            {
                await using var subscriber = await MqttRawClient.ConnectAsync(server.MqttPort);
                await subscriber.SendAsync(MqttRawClient.Connect("q2-out-restart", clean: false));
                await subscriber.ReadAsync(4);
                await subscriber.SendAsync(MqttRawClient.Subscribe(1, "o/x", 2));
                Assert.Equal(new byte[] { 0x90, 3, 0, 1, 2 }, await subscriber.ReadAsync(5));
                await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
                await publisher.SendAsync(MqttRawClient.Connect("q2-out-pub"));
                await publisher.ReadAsync(4);
                await publisher.SendAsync(MqttRawClient.Publish("o/x", "w", qos: 2, packetId: 3));
                Assert.Equal(new byte[] { 0x50, 2, 0, 3 }, await publisher.ReadAsync(4));
                await publisher.SendAsync(0x62, 2, 0, 3);
                Assert.Equal(new byte[] { 0x70, 2, 0, 3 }, await publisher.ReadAsync(4));
                delivered = await subscriber.ReadAsync(10);
                Assert.Equal(new byte[] { 0x34, 8, 0, 3, (byte)'o', (byte)'/', (byte)'x' }, delivered[..7]);
                await subscriber.SendAsync(0x50, 2, delivered[7], delivered[8]);
                Assert.Equal(new byte[] { 0x62, 2, delivered[7], delivered[8] }, await subscriber.ReadAsync(4));
                // No PUBCOMP: the PUBREL is what stays in flight.
                subscriber.Abort();
            }
            await using var restarted = await MqttTestServer.StartAsync("ours", storeDir: storeDir);
            await using var again = await MqttRawClient.ConnectAsync(restarted.MqttPort);
            await again.SendAsync(MqttRawClient.Connect("q2-out-restart", clean: false));
            Assert.Equal(new byte[] { 0x20, 2, 1, 0 }, await again.ReadAsync(4));
            Assert.Equal(new byte[] { 0x62, 2, delivered[7], delivered[8] }, await again.ReadAsync(4));
            await again.SendAsync(0x70, 2, delivered[7], delivered[8]);
            await again.SendAsync(0xc0, 0);
            var next = await again.ReadAsync(2);
            while (next[0] == 0x62)
            {
                // A PUBREL redelivery that raced the PUBCOMP.
                await again.ReadAsync(2);
                next = await again.ReadAsync(2);
            }
            Assert.Equal(new byte[] { 0xd0, 0 }, next);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Session_record_is_gos_mqttPersistedSession_under_gos_subject(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "ack_wait: \"5s\"\n max_ack_pending: 100");
        using (var client = await ConnectAsync(server, "record-check", clean: false))
        {
            await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
                .WithTopicFilter("a/b", MqttQualityOfServiceLevel.AtLeastOnce)
                .WithTopicFilter("c/#", MqttQualityOfServiceLevel.AtMostOnce)
                .Build());
            await client.DisconnectAsync();
        }
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        var js = new NatsJSContext(nats);
        var stream = await js.GetStreamAsync("$MQTT_sess");
        var hash = GoHash("record-check");
        var stored = await stream.GetAsync(new StreamMsgGetRequest { LastBySubj = "$MQTT.sess." + hash });
        using var record = JsonDocument.Parse(stored.Message.Data);
        var root = record.RootElement;
        Assert.Equal("record-check", root.GetProperty("id").GetString());
        Assert.False(root.TryGetProperty("clean", out _));
        var subs = root.GetProperty("subs").EnumerateObject().Select(p => $"{p.Name}={p.Value.GetInt32()}").Order(StringComparer.Ordinal);
        Assert.Equal(["a.b=1", "c.>=0"], subs);
        var cons = root.GetProperty("cons").EnumerateObject().ToList();
        var consumer = Assert.Single(cons);
        Assert.Equal("a.b", consumer.Name);
        var config = consumer.Value;
        Assert.StartsWith(hash + "_", config.GetProperty("durable_name").GetString());
        Assert.StartsWith("$MQTT.sub.", config.GetProperty("deliver_subject").GetString());
        Assert.Equal(
            ("$MQTT.msgs.a.b", "explicit", "new", 5_000_000_000L, 100),
            (config.GetProperty("filter_subject").GetString(), config.GetProperty("ack_policy").GetString(), config.GetProperty("deliver_policy").GetString(),
                config.GetProperty("ack_wait").GetInt64(), config.GetProperty("max_ack_pending").GetInt32()));
    }

    /// <summary>Go's getHash: the first 8 bytes of SHA-256, each modulo 62 into [0-9A-Za-z].</summary>
    private static string GoHash(string value)
    {
        const string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        return new string(SHA256.HashData(Encoding.UTF8.GetBytes(value)).Take(8).Select(b => digits[b % 62]).ToArray());
    }
}
