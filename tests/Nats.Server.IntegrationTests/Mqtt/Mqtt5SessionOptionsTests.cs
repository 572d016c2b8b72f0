using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// MQTT 5 beyond the first landing: what CONNACK decides (server keep alive, response information), our
/// topic aliases towards a client, no local for QoS 1, and subscription options kept with the session.
/// </summary>
public sealed class Mqtt5SessionOptionsTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task Connack_carries_server_keep_alive_and_response_information_when_asked()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours", "max_keep_alive: 30");
        using var none = new MqttClientFactory().CreateMqttClient();
        var capped = await none.ConnectAsync(Mqtt5ClientTests.Options(broker, "ka-none").WithKeepAlivePeriod(TimeSpan.Zero).Build());
        Assert.Equal(30, capped.ServerKeepAlive);
        Assert.True(string.IsNullOrEmpty(capped.ResponseInformation));

        // Within the maximum the client's own keep-alive stands, and nothing is said; asked for, the response information comes.
        using var within = new MqttClientFactory().CreateMqttClient();
        var kept = await within.ConnectAsync(Mqtt5ClientTests.Options(broker, "ka-within").WithKeepAlivePeriod(TimeSpan.FromSeconds(10))
            .WithRequestResponseInformation(true).Build());
        Assert.Equal(0, kept.ServerKeepAlive);
        var prefix = kept.ResponseInformation;
        Assert.StartsWith("_INBOX/mqtt/", prefix, StringComparison.Ordinal);
        Assert.EndsWith("/", prefix, StringComparison.Ordinal);

        // The response prefix is an inbox NATS responders answer into.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        var inbox = Inbox(within);
        await within.SubscribeAsync(prefix + "#");
        await nats.PublishAsync(prefix.Replace('/', '.') + "answer", "hello"u8.ToArray());
        var got = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal((prefix + "answer", "hello"), (got.Topic, got.ConvertPayloadToString()));
    }

    /// <summary>
    /// A client without keep alive gets the server's maximum, from ours as from mosquitto's max_keepalive. (MQTTnet 5.2
    /// then pings with a zero timeout and drops the connection itself, against either broker: a client quirk.)
    /// </summary>
    [Theory]
    [InlineData("ours")]
    [InlineData("mosquitto")]
    public async Task A_client_without_keep_alive_gets_the_servers_maximum_as_from_mosquitto(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind, "max_keep_alive: 30");
        using var client = new MqttClientFactory().CreateMqttClient();
        var result = await client.ConnectAsync(Mqtt5ClientTests.Options(broker, "ka-zero-" + kind).WithKeepAlivePeriod(TimeSpan.Zero).Build());
        Assert.Equal(30, result.ServerKeepAlive);
    }

    [Fact]
    public async Task Server_topic_aliases_stay_within_the_clients_maximum_and_replace_the_topic()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.NatsUrl });
        await using var raw = await MqttRawClient.ConnectAsync(broker.Port);
        // CONNECT v5, clean start, keep-alive 60, properties: Topic Alias Maximum (0x22) = 2.
        await raw.SendAsync(MqttRawClient.Packet(0x10, [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 5, 0x02, 0, 60, 3, 0x22, 0, 2, 0, 5,
            (byte)'a', (byte)'l', (byte)'r', (byte)'a', (byte)'w']));
        var connAck = await ReadPacketAsync(raw);
        Assert.Equal((0x20, 0), (connAck.Header, connAck.Body[1]));
        // SUBSCRIBE v5: packet id 1, no properties, "al/#" with QoS 0.
        await raw.SendAsync(MqttRawClient.Packet(0x82, [0, 1, 0, 0, 4, (byte)'a', (byte)'l', (byte)'/', (byte)'#', 0]));
        Assert.Equal(0x90, (await ReadPacketAsync(raw)).Header);

        foreach (var subject in new[] { "al.one", "al.one", "al.two", "al.two", "al.three", "al.three" })
        {
            await nats.PublishAsync(subject, Encoding.ASCII.GetBytes(subject));
        }
        var seen = new List<(string Topic, int Alias, string Payload)>();
        for (var i = 0; i < 6; i++)
        {
            seen.Add(ReadPublish(await ReadPacketAsync(raw)));
        }
        Assert.Equal(
            [("al/one", 1, "al.one"), ("", 1, "al.one"), ("al/two", 2, "al.two"), ("", 2, "al.two"), ("al/three", 1, "al.three"), ("", 1, "al.three")],
            seen);
    }

    [Fact]
    public async Task No_local_holds_for_qos1_and_subscription_options_survive_a_restart()
    {
        var store = Directory.CreateTempSubdirectory("mqtt5-opts-").FullName;
        try
        {
            await using (var server = await MqttTestServer.StartAsync("ours", "", store))
            {
                using var client = new MqttClientFactory().CreateMqttClient();
                await client.ConnectAsync(Options(server.MqttPort, "keeper").WithCleanStart(false).WithSessionExpiryInterval(600).Build());
                var inbox = Inbox(client);
                await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithSubscriptionIdentifier(9).WithTopicFilter(f => f.WithTopic("nl/q")
                    .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).WithNoLocal()).Build());
                await AssertNoLocalAsync(server.MqttPort, client, inbox, "before");
                await client.DisconnectAsync();
            }
            await using (var server = await MqttTestServer.StartAsync("ours", "", store))
            {
                using var client = new MqttClientFactory().CreateMqttClient();
                var inbox = Inbox(client);
                var result = await client.ConnectAsync(Options(server.MqttPort, "keeper").WithCleanStart(false).WithSessionExpiryInterval(600).Build());
                Assert.True(result.IsSessionPresent);
                await AssertNoLocalAsync(server.MqttPort, client, inbox, "after");
                await client.DisconnectAsync();
            }
        }
        finally
        {
            Directory.Delete(store, recursive: true);
        }
    }

    /// <summary>The client's own QoS 1 publish is not delivered back; another client's arrives with the subscription identifier.</summary>
    private static async Task AssertNoLocalAsync(int port, IMqttClient client, ChannelReader<MqttApplicationMessage> inbox, string tag)
    {
        var own = await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("nl/q").WithPayload("own-" + tag)
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(own.IsSuccess);
        using var other = new MqttClientFactory().CreateMqttClient();
        await other.ConnectAsync(Options(port, "other-" + tag).Build());
        await other.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("nl/q").WithPayload("other-" + tag)
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        // The stored copies reach the consumer in publish order: had our own come back, it would be first.
        var first = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal("other-" + tag, first.ConvertPayloadToString());
        Assert.Equal([9u], first.SubscriptionIdentifiers);
        await other.DisconnectAsync();
    }

    private static MqttClientOptionsBuilder Options(int port, string clientId) =>
        new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", port).WithClientId(clientId).WithProtocolVersion(MqttProtocolVersion.V500).WithTimeout(Wait);

    private static async Task<(byte Header, byte[] Body)> ReadPacketAsync(MqttRawClient raw)
    {
        var header = (await raw.ReadAsync(1))[0];
        int length = 0, shift = 0;
        while (true)
        {
            var b = (await raw.ReadAsync(1))[0];
            length |= (b & 0x7f) << shift;
            shift += 7;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }
        return (header, length == 0 ? [] : await raw.ReadAsync(length));
    }

    /// <summary>A QoS 0 MQTT 5 PUBLISH: its topic, its Topic Alias property (0 when absent) and its payload.</summary>
    private static (string Topic, int Alias, string Payload) ReadPublish((byte Header, byte[] Body) packet)
    {
        Assert.Equal(0x30, packet.Header & 0xf0);
        var body = packet.Body;
        var topicLength = (body[0] << 8) | body[1];
        var topic = Encoding.UTF8.GetString(body, 2, topicLength);
        var p = 2 + topicLength;
        int propertiesLength = 0, shift = 0;
        while (true)
        {
            var b = body[p++];
            propertiesLength |= (b & 0x7f) << shift;
            shift += 7;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }
        var alias = 0;
        var properties = body.AsSpan(p, propertiesLength);
        for (var i = 0; i < properties.Length - 2; i++)
        {
            if (properties[i] == 0x23)
            {
                alias = (properties[i + 1] << 8) | properties[i + 2];
                break;
            }
        }
        return (topic, alias, Encoding.UTF8.GetString(body, p + propertiesLength, body.Length - p - propertiesLength));
    }
}
