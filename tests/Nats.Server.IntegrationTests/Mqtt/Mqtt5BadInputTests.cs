using System.Text;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// Hand-built MQTT 5 packets a server must refuse: the DISCONNECT (or CONNACK) reason code the specification
/// names, the connection closed, and the server still serving the next client. Where mosquitto is run too, it
/// answers the same way.
/// </summary>
public sealed class Mqtt5BadInputTests
{
    public static TheoryData<string, string> Cases
    {
        get
        {
            var data = new TheoryData<string, string>();
            foreach (var broker in new[] { "ours", "mosquitto" })
            {
                foreach (var name in new[] { "alias-above-maximum", "duplicate-property", "property-not-allowed", "truncated-property", "auth-packet", "unknown-alias" })
                {
                    data.Add(broker, name);
                }
            }
            return data;
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Bad_packets_after_connect_end_in_disconnect_with_the_reason(string kind, string name)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        var (packet, reason) = name switch
        {
            "alias-above-maximum" => (Publish("a/b", [0x23, 0xfd, 0xe8]), 0x94),
            "duplicate-property" => (Publish("a/b", [0x01, 0x00, 0x01, 0x01]), 0x82),
            "property-not-allowed" => (Publish("a/b", [0x11, 0, 0, 0, 10]), 0x81),
            "truncated-property" => (Publish("a/b", [0x03, 0x00, 0x09, (byte)'x']), 0x81),
            "auth-packet" => (MqttRawClient.Packet(0xf0, [0x00, 0x00]), 0x82),
            _ => (Publish("", [0x23, 0x00, 0x05]), 0x82),
        };
        var actual = await DisconnectReasonAsync(broker, packet);
        // The specification lets a server close without a DISCONNECT: mosquitto does for some of these, ours always says why.
        Assert.Contains(actual, kind == "ours" ? new[] { reason } : [reason, -1]);
        await AssertServingAsync(broker);
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("mosquitto")]
    public async Task Connect_with_an_authentication_method_is_refused_with_0x8C(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("authm", [0x15, 0x00, 0x05, .. "SCRAM"u8]));
        var connack = await ReadPacketAsync(client);
        Assert.Equal((0x20, 0x8C), (connack[0], connack[3]));
        Assert.True(await client.WaitClosedAsync());
        await AssertServingAsync(broker);
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("mosquitto")]
    public async Task Connect_with_receive_maximum_zero_is_a_protocol_error(string kind)
    {
        await using var broker = await Mqtt5Broker.StartAsync(kind);
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("rm0", [0x21, 0x00, 0x00]));
        try
        {
            var connack = await ReadPacketAsync(client);
            Assert.Equal((0x20, 0x82), (connack[0], connack[3]));
        }
        catch (EndOfStreamException) when (kind == "mosquitto")
        {
            // Mosquitto closes without a CONNACK, as the specification allows.
        }
        Assert.True(await client.WaitClosedAsync());
    }

    [Fact]
    public async Task A_reason_code_an_acknowledgement_cannot_carry_is_a_protocol_error()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        Assert.Equal(0x82, await DisconnectReasonAsync(broker, MqttRawClient.Packet(0x40, [0x00, 0x01, 0x8e, 0x00])));
        await AssertServingAsync(broker);
    }

    [Fact]
    public async Task A_packet_over_the_maximum_packet_size_is_0x95()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours", "", "max_payload: 1024");
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("big", []));
        var connack = await ReadPacketAsync(client);
        // Maximum Packet Size (0x27) is in CONNACK; one byte more than it is refused.
        var maximum = MaximumPacketSize(connack);
        var payload = new string('x', (int)maximum);
        await client.SendAsync(Publish("big/one", [], payload));
        Assert.Equal(0x95, (await ReadPacketAsync(client))[2]);
        Assert.True(await client.WaitClosedAsync());
        await AssertServingAsync(broker);
    }

    [Fact]
    public async Task More_qos2_publishes_in_flight_than_receive_maximum_is_0x93()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours", "receive_maximum: 2");
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("rm", []));
        await ReadPacketAsync(client);
        await client.SendAsync([.. Publish("rm/a", [], "1", qos: 2, packetId: 1), .. Publish("rm/a", [], "2", qos: 2, packetId: 2)]);
        Assert.Equal(0x50, (await ReadPacketAsync(client))[0]);
        Assert.Equal(0x50, (await ReadPacketAsync(client))[0]);
        // A resent PUBLISH of an identifier in flight does not count again; a third one does.
        await client.SendAsync(Publish("rm/a", [], "2", qos: 2, packetId: 2));
        Assert.Equal(0x50, (await ReadPacketAsync(client))[0]);
        await client.SendAsync(Publish("rm/a", [], "3", qos: 2, packetId: 3));
        var refused = await ReadPacketAsync(client);
        Assert.Equal((0xe0, 0x93), (refused[0], refused[2]));
        Assert.True(await client.WaitClosedAsync());
    }

    [Fact]
    public async Task The_clients_receive_maximum_holds_back_a_second_qos1_delivery_until_its_puback()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours", "ack_wait: \"1s\"");
        await using (var away = await MqttRawClient.ConnectAsync(broker.Port))
        {
            // A session kept for an hour with a QoS 1 subscription, then left.
            await away.SendAsync(Connect("rmax", [0x11, 0, 0, 0x0e, 0x10], clean: false));
            await ReadPacketAsync(away);
            await away.SendAsync(MqttRawClient.Packet(0x82, [0x00, 0x01, 0x00, 0x00, 0x05, .. "rm/in"u8, 0x01]));
            Assert.Equal(0x90, (await ReadPacketAsync(away))[0]);
            await away.SendAsync(0xe0, 0x00);
            Assert.True(await away.WaitClosedAsync());
        }
        await broker.WaitForMqttConnectionsAsync(0);
        await using (var publisher = await MqttRawClient.ConnectAsync(broker.Port))
        {
            await publisher.SendAsync(Connect("rmax-pub", []));
            await ReadPacketAsync(publisher);
            await publisher.SendAsync([.. Publish("rm/in", [], "1", qos: 1, packetId: 1), .. Publish("rm/in", [], "2", qos: 1, packetId: 2)]);
            Assert.Equal(0x40, (await ReadPacketAsync(publisher))[0]);
            Assert.Equal(0x40, (await ReadPacketAsync(publisher))[0]);
        }
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        // Receive maximum 1: the queued messages come one at a time.
        await client.SendAsync(Connect("rmax", [0x11, 0, 0, 0x0e, 0x10, 0x21, 0x00, 0x01], clean: false));
        Assert.Equal(1, (await ReadPacketAsync(client))[2]);
        var first = await ReadPacketAsync(client);
        Assert.Equal((0x32, (byte)'1'), (first[0], first[^1]));
        // Unacknowledged, the next packet is the first message again (DUP, same identifier, after ack_wait), not the second.
        var again = await ReadPacketAsync(client);
        Assert.Equal((0x3a, first[9], first[10], (byte)'1'), (again[0], again[9], again[10], again[^1]));
        await client.SendAsync(MqttRawClient.Packet(0x40, [first[9], first[10]]));
        var second = await ReadPacketAsync(client);
        Assert.Equal((0x32, (byte)'2'), (second[0] & 0xf7, second[^1]));
    }

    [Fact]
    public async Task Keep_alive_timeout_is_0x8D()
    {
        await using var broker = await Mqtt5Broker.StartAsync("ours");
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("sleepy", [], keepAlive: 1));
        await ReadPacketAsync(client);
        var disconnect = await ReadPacketAsync(client);
        Assert.Equal((0xe0, 0x8d), (disconnect[0], disconnect[2]));
        Assert.True(await client.WaitClosedAsync());
    }

    /// <summary>Connects, sends <paramref name="packet"/>, returns the DISCONNECT's reason code (-1 if the server just closed).</summary>
    private static async Task<int> DisconnectReasonAsync(Mqtt5Broker broker, byte[] packet)
    {
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("bad-" + Guid.NewGuid().ToString("N")[..8], []));
        Assert.Equal(0x20, (await ReadPacketAsync(client))[0]);
        await client.SendAsync(packet);
        byte[] answer;
        try
        {
            answer = await ReadPacketAsync(client);
        }
        catch (EndOfStreamException)
        {
            return -1;
        }
        Assert.Equal(0xe0, answer[0]);
        Assert.True(await client.WaitClosedAsync());
        return answer.Length > 2 ? answer[2] : 0;
    }

    private static async Task AssertServingAsync(Mqtt5Broker broker)
    {
        await using var client = await MqttRawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("after", []));
        var connack = await ReadPacketAsync(client);
        Assert.Equal((0x20, 0x00), (connack[0], connack[3]));
        await client.SendAsync(0xc0, 0x00);
        Assert.Equal([0xd0, 0x00], await ReadPacketAsync(client));
    }

    /// <summary>One whole packet: fixed header, remaining length, body.</summary>
    private static async Task<byte[]> ReadPacketAsync(MqttRawClient client)
    {
        var head = new List<byte>(await client.ReadAsync(1));
        var length = 0;
        var multiplier = 1;
        while (true)
        {
            var b = (await client.ReadAsync(1))[0];
            head.Add(b);
            length += (b & 0x7f) * multiplier;
            multiplier *= 128;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }
        return [.. head, .. length > 0 ? await client.ReadAsync(length) : []];
    }

    private static uint MaximumPacketSize(byte[] connack)
    {
        // 0x20, remaining (one byte here), flags, reason, properties length, properties.
        var p = 5;
        while (p < connack.Length)
        {
            var id = connack[p++];
            switch (id)
            {
                case 0x27:
                    return (uint)(connack[p] << 24 | connack[p + 1] << 16 | connack[p + 2] << 8 | connack[p + 3]);
                case 0x21 or 0x22 or 0x13:
                    p += 2;
                    break;
                case 0x24 or 0x25 or 0x28 or 0x29 or 0x2a:
                    p += 1;
                    break;
                case 0x11:
                    p += 4;
                    break;
                default:
                    p += 2 + (connack[p] << 8 | connack[p + 1]);
                    break;
            }
        }
        throw new InvalidOperationException("no maximum packet size in CONNACK");
    }

    internal static byte[] Connect(string clientId, byte[] properties, ushort keepAlive = 60, bool clean = true)
    {
        var id = Encoding.UTF8.GetBytes(clientId);
        return MqttRawClient.Packet(0x10, [0, 4, .. "MQTT"u8, 5, clean ? (byte)0x02 : (byte)0x00, (byte)(keepAlive >> 8), (byte)keepAlive, .. VarInt(properties.Length), .. properties,
            (byte)(id.Length >> 8), (byte)id.Length, .. id]);
    }

    internal static byte[] Publish(string topic, byte[] properties, string payload = "x", byte qos = 0, ushort packetId = 0)
    {
        var t = Encoding.UTF8.GetBytes(topic);
        byte[] id = qos > 0 ? [(byte)(packetId >> 8), (byte)packetId] : [];
        return MqttRawClient.Packet((byte)(0x30 | qos << 1), [(byte)(t.Length >> 8), (byte)t.Length, .. t, .. id, .. VarInt(properties.Length), .. properties,
            .. Encoding.UTF8.GetBytes(payload)]);
    }

    private static byte[] VarInt(int value)
    {
        var bytes = new List<byte>();
        do
        {
            var b = (byte)(value % 128);
            value /= 128;
            bytes.Add(value > 0 ? (byte)(b | 0x80) : b);
        }
        while (value > 0);
        return [.. bytes];
    }
}
