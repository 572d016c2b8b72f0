using System.Text;
using Nats.Server.Mqtt;

namespace Nats.Server.Tests.Mqtt;

/// <summary>The MQTT 5 codec on bytes alone: properties, CONNECT, PUBLISH with aliases, the header mapping and the server's packets.</summary>
public sealed class MqttV5CodecTests
{
    [Fact]
    public void Property_reader_refuses_duplicates_misplaced_identifiers_and_bad_utf8_with_their_reason_codes()
    {
        Assert.Equal(MqttReasonCodes.ProtocolError, Refusal([0x01, 0x00, 0x01, 0x01], MqttProperties.InPublish));
        Assert.Equal(MqttReasonCodes.MalformedPacket, Refusal([0x11, 0, 0, 0, 1], MqttProperties.InPublish));
        Assert.Equal(MqttReasonCodes.MalformedPacket, Refusal([0x03, 0x00, 0x02, 0xff, 0xfe], MqttProperties.InPublish));
        Assert.Equal(MqttReasonCodes.MalformedPacket, Refusal([0x03, 0x00, 0x09, (byte)'x'], MqttProperties.InPublish));
        Assert.Equal(MqttReasonCodes.ProtocolError, Refusal([0x01, 0x02], MqttProperties.InPublish));

        // User properties may repeat.
        byte[] two = [0x26, 0, 1, (byte)'a', 0, 1, (byte)'1', 0x26, 0, 1, (byte)'a', 0, 1, (byte)'2'];
        var reader = new MqttPropertyReader(two, MqttProperties.InPublish, "PUBLISH");
        var values = new List<string>();
        while (reader.Next(out var property))
        {
            values.Add(Encoding.UTF8.GetString(property.Name) + "=" + Encoding.UTF8.GetString(property.Value));
        }
        Assert.Equal(["a=1", "a=2"], values);
    }

    [Fact]
    public void Connect_reads_v5_properties_assigns_an_id_and_refuses_an_authentication_method()
    {
        byte[] properties = [0x11, 0, 0, 0, 30, 0x21, 0, 5, 0x27, 0, 0, 4, 0, 0x22, 0, 3, 0x17, 0];
        var connect = MqttConnect.Parse(ConnectBody(properties, "", clean: false), () => "assigned");
        Assert.Equal((true, "assigned", true, 30u, (ushort)5, 1024u, (ushort)3, false, false),
            (connect.IsV5, connect.ClientId, connect.AssignedClientId, connect.SessionExpiry, connect.ReceiveMaximum, connect.MaximumPacketSize,
             connect.TopicAliasMaximum, connect.RequestProblemInfo, connect.EndsWithConnection));

        var refused = Assert.Throws<MqttProtocolException>(() => MqttConnect.Parse(ConnectBody([0x15, 0, 1, (byte)'X'], "c", clean: true), () => "x"));
        Assert.Equal(MqttReasonCodes.BadAuthenticationMethod, refused.Reason);
    }

    [Fact]
    public void Publish_sets_and_uses_topic_aliases_within_the_maximum()
    {
        var aliases = new MqttTopicAliases();
        var scratch = new byte[8];
        var set = MqttDecoder.ParsePublish(0, PublishBody("a/b", [0x23, 0, 7]), ref scratch, aliases);
        Assert.Equal("a.b", Encoding.UTF8.GetString(set.Subject));
        var used = MqttDecoder.ParsePublish(0, PublishBody("", [0x23, 0, 7]), ref scratch, aliases);
        Assert.Equal(("a/b", "a.b"), (Encoding.UTF8.GetString(used.Topic), Encoding.UTF8.GetString(used.Subject)));

        Assert.Equal(MqttReasonCodes.TopicAliasInvalid, Assert.Throws<MqttProtocolException>(() =>
            MqttDecoder.ParsePublish(0, PublishBody("a/b", [0x23, 0, 65]), ref scratch, aliases)).Reason);
        Assert.Equal(MqttReasonCodes.ProtocolError, Assert.Throws<MqttProtocolException>(() =>
            MqttDecoder.ParsePublish(0, PublishBody("", [0x23, 0, 8]), ref scratch, aliases)).Reason);
    }

    [Fact]
    public void Properties_become_header_lines_and_come_back_as_delivery_properties()
    {
        byte[] properties = [0x26, 0, 4, .. "unit"u8, 0, 1, (byte)'C', 0x03, 0, 4, .. "text"u8, 0x01, 1, 0x02, 0, 0, 0, 60,
            0x09, 0, 3, 1, 2, 3, 0x08, 0, 5, .. "r/e/p"u8, 0x26, 0, 3, .. "a b"u8, 0, 1, (byte)'x'];
        var scratch = new byte[8];
        var publish = MqttDecoder.ParsePublish(0, PublishBody("t", properties), ref scratch, new MqttTopicAliases());
        var lines = new byte[MqttV5Headers.MaxLinesSize(publish.Properties)];
        var length = MqttV5Headers.AppendLines(publish.Properties, lines, 1_000_000);
        Assert.Equal("unit:C\r\nContent-Type:text\r\nNmqtt-Format:1\r\nNmqtt-Expires:1060000\r\nNmqtt-Corr:AQID\r\nNmqtt-Reply:r.e.p\r\n",
            Encoding.UTF8.GetString(lines, 0, length));
        Assert.Equal("r.e.p", Encoding.UTF8.GetString(MqttV5Headers.ReplyIn(lines.AsSpan(0, length))));

        byte[] headers = [.. "NATS/1.0\r\nNmqtt-Pub:1\r\n"u8, .. lines.AsSpan(0, length), .. "\r\n"u8];
        var encoded = new byte[MqttV5Headers.MaxPropertiesSize(headers.Length, 0)];
        Assert.True(MqttV5Headers.EncodeProperties(headers, default, 9, 1_030_500, encoded, out var written));
        byte[] expected = [0x0b, 9, 0x26, 0, 4, .. "unit"u8, 0, 1, (byte)'C', 0x03, 0, 4, .. "text"u8, 0x01, 1, 0x02, 0, 0, 0, 30,
            0x09, 0, 3, 1, 2, 3, 0x08, 0, 5, .. "r/e/p"u8];
        Assert.Equal(expected, encoded.AsSpan(0, written).ToArray());
        Assert.False(MqttV5Headers.EncodeProperties(headers, default, 0, 1_060_000, encoded, out _));
    }

    [Fact]
    public void Server_packets_have_the_v5_layout()
    {
        Assert.Equal([0x90, 6, 0, 7, 0, 1, 0x87, 0x8f], MqttV5Packets.Acks(MqttPackets.SubAck, 7, [1, 0x87, 0x8f]));
        Assert.Equal([0xe0, 1, 0x8e], MqttV5Packets.Disconnect(0x8e, null));
        Assert.Equal([0xe0, 6, 0x8d, 4, 0x1f, 0, 1, (byte)'k'], MqttV5Packets.Disconnect(0x8d, "k"));
        Assert.Equal([0x20, 3, 0, 0x8c, 0], MqttV5Packets.ConnAck(false, 0x8c, null, null, 0, 0));
        var publish = new byte[MqttV5Packets.PublishSize(1, 2, 1, 1)];
        MqttV5Packets.WritePublish(publish, "t"u8, [0x01, 1], "p"u8, 1, 5, dup: true, retain: true);
        Assert.Equal([0x3b, 9, 0, 1, (byte)'t', 0, 5, 2, 0x01, 1, (byte)'p'], publish);
    }

    private static byte Refusal(byte[] section, ulong allowed)
    {
        try
        {
            var reader = new MqttPropertyReader(section, allowed, "test");
            while (reader.Next(out _))
            {
            }
        }
        catch (MqttProtocolException e)
        {
            return e.Reason;
        }
        throw new InvalidOperationException("accepted");
    }

    private static byte[] ConnectBody(byte[] properties, string clientId, bool clean)
    {
        var id = Encoding.UTF8.GetBytes(clientId);
        return [0, 4, .. "MQTT"u8, 5, clean ? (byte)2 : (byte)0, 0, 60, (byte)properties.Length, .. properties, 0, (byte)id.Length, .. id];
    }

    private static byte[] PublishBody(string topic, byte[] properties)
    {
        var t = Encoding.UTF8.GetBytes(topic);
        return [0, (byte)t.Length, .. t, (byte)properties.Length, .. properties, (byte)'x'];
    }
}
