using System.Buffers;
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

    // Go refuses a max_payload above max_pending.
    private const string SmallMaxPayload = "max_payload: 65536";

    /// <summary>
    /// Issue #9 for an MQTT subscriber: a raw NATS publisher far faster than MQTTnet can parse, and a
    /// server-side queue much smaller than what is published; the subscriber keeps reading, so it must
    /// get every message, in order (the publisher is paused instead). Ours only: Go 2.9.10 cuts this
    /// subscriber (measured: disconnected after about 20,000 of the 200,000 messages).
    /// </summary>
    [Fact]
    public async Task A_reading_mqttnet_subscriber_is_never_cut_by_a_fast_nats_publisher()
    {
        const string kind = "ours";
        const int count = 200_000;
        await using var server = await MqttTestServer.StartAsync(kind, extraConfig: [SmallMaxPending, SmallMaxPayload]);
        var (subscriber, done) = await SequenceCheckingSubscriberAsync(server, "net-slow-sub", count);
        await using var publisher = await FastPublisher.ConnectAsync(new Uri(server.NatsUrl).Port);
        await publisher.PublishAsync("flood", 0, count, 64);
        var outcome = await done.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.True(outcome is null, $"{kind}: {outcome}");
        Assert.True(subscriber.IsConnected, $"{kind}: the subscriber was disconnected");
        await subscriber.DisconnectAsync();
        subscriber.Dispose();
    }

    /// <summary>
    /// A subscriber that never reads its socket is still cut (within the stuck bound once the publisher
    /// waits on it), the publisher finishes, and a reading subscriber of the same topic loses nothing.
    /// Ours only: Go 2.9.10 cuts the reading subscriber as well (measured: after a few hundred messages).
    /// </summary>
    [Fact]
    public async Task A_stuck_mqtt_subscriber_is_cut_and_a_reading_one_gets_everything()
    {
        const string kind = "ours";
        const int count = 100_000;
        await using var server = await MqttTestServer.StartAsync(kind, extraConfig: [SmallMaxPending, SmallMaxPayload]);
        await using var stuck = await MqttRawClient.ConnectAsync(server.MqttPort);
        await stuck.SendAsync(MqttRawClient.Connect("stuck-sub"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await stuck.ReadAsync(4));
        await stuck.SendAsync(MqttRawClient.Subscribe(1, "flood", 0));
        Assert.Equal(new byte[] { 0x90, 3, 0, 1, 0 }, await stuck.ReadAsync(5));
        var (healthy, done) = await SequenceCheckingSubscriberAsync(server, "net-healthy-sub", count);

        await using var publisher = await FastPublisher.ConnectAsync(new Uri(server.NatsUrl).Port);
        // 100k x 1 KiB: far more than the stuck socket's kernel buffers and max_pending together.
        await publisher.PublishAsync("flood", 0, count, 1024);
        var outcome = await done.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.True(outcome is null, $"{kind}: {outcome}");
        Assert.True(await stuck.WaitClosedAsync(), $"{kind}: the stuck subscriber was not cut");
        await healthy.DisconnectAsync();
        healthy.Dispose();
    }

    /// <summary>The same with an MQTT publisher (raw packets, as fast as the socket takes them) feeding an MQTTnet subscriber.</summary>
    [Fact]
    public async Task A_reading_mqttnet_subscriber_is_never_cut_by_a_fast_mqtt_publisher()
    {
        const int count = 100_000;
        const int payloadSize = 64;
        await using var server = await MqttTestServer.StartAsync("ours", extraConfig: [SmallMaxPending, SmallMaxPayload]);
        var (subscriber, done) = await SequenceCheckingSubscriberAsync(server, "net-slow-sub", count);
        await using var publisher = await MqttRawClient.ConnectAsync(server.MqttPort);
        await publisher.SendAsync(MqttRawClient.Connect("mqtt-flooder"));
        await publisher.ReadAsync(4);
        var packet = Publish("flood", payloadSize);
        const int perBatch = 512;
        var batch = new byte[packet.Length * perBatch];
        for (var sent = 0; sent < count;)
        {
            var n = Math.Min(perBatch, count - sent);
            for (var i = 0; i < n; i++, sent++)
            {
                BinaryPrimitives.WriteInt64LittleEndian(packet.AsSpan(packet.Length - payloadSize + 1), sent);
                packet.CopyTo(batch, i * packet.Length);
            }
            await publisher.SendAsync(batch[..(n * packet.Length)]);
        }
        var outcome = await done.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.True(outcome is null, outcome);
        Assert.True(subscriber.IsConnected);
        await subscriber.DisconnectAsync();
        subscriber.Dispose();
    }

    /// <summary>An MQTTnet QoS 0 subscriber to "flood" that checks each payload carries the next sequence; completes with null when all arrived, or what went wrong.</summary>
    private static async Task<(IMqttClient Client, Task<string?> Done)> SequenceCheckingSubscriberAsync(MqttTestServer server, string clientId, long count)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var done = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        long next = 0;
        client.ApplicationMessageReceivedAsync += e =>
        {
            var payload = e.ApplicationMessage.Payload;
            var sequence = BinaryPrimitives.ReadInt64LittleEndian(payload.Slice(1, 8).ToArray());
            if (sequence != next)
            {
                done.TrySetResult($"expected message {next}, got {sequence}");
            }
            else if (++next == count)
            {
                done.TrySetResult(null);
            }
            return Task.CompletedTask;
        };
        client.DisconnectedAsync += e =>
        {
            done.TrySetResult($"{clientId} disconnected after {Interlocked.Read(ref next)} messages: {e.Reason} {e.Exception?.Message}");
            return Task.CompletedTask;
        };
        await client.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort)
            .WithClientId(clientId).WithProtocolVersion(MqttProtocolVersion.V311).WithTimeout(TimeSpan.FromSeconds(30)).Build());
        await client.SubscribeAsync("flood", MQTTnet.Protocol.MqttQualityOfServiceLevel.AtMostOnce);
        return (client, done.Task);
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
