using System.Buffers.Binary;
using System.Text;

namespace Nats.Server.Mqtt;

/// <summary>The packets the server writes to an MQTT 5 client where they differ from 3.1.1 (properties, reason codes).</summary>
internal static class MqttV5Packets
{
    /// <summary>CONNACK: what the server supports and, when it differs from what the client asked, what it decided.</summary>
    /// <param name="serverKeepAlive">The keep-alive the server holds the client to when it overrides the client's (0: none sent).</param>
    /// <param name="responseInfo">The response topic prefix, when the client requested response information.</param>
    public static byte[] ConnAck(bool present, byte reason, MqttConnect? connect, string? assignedClientId, ushort receiveMaximum, uint maximumPacketSize,
        ushort serverKeepAlive = 0, string? responseInfo = null)
    {
        Span<byte> properties = stackalloc byte[512];
        var p = 0;
        if (reason == MqttReasonCodes.Success && connect is not null)
        {
            p += MqttProperties.WriteUInt16(properties[p..], MqttProperties.TopicAliasMaximum, MqttTopicAliases.Maximum);
            if (receiveMaximum != ushort.MaxValue)
            {
                p += MqttProperties.WriteUInt16(properties[p..], MqttProperties.ReceiveMaximum, receiveMaximum);
            }
            p += MqttProperties.WriteUInt32(properties[p..], MqttProperties.MaximumPacketSize, maximumPacketSize);
            p += MqttProperties.WriteByte(properties[p..], MqttProperties.SubscriptionIdAvailable, 1);
            p += MqttProperties.WriteByte(properties[p..], MqttProperties.SharedAvailable, 1);
            if (assignedClientId is not null)
            {
                p += MqttProperties.WriteBytes(properties[p..], MqttProperties.AssignedClientId, Encoding.UTF8.GetBytes(assignedClientId));
            }
            if (serverKeepAlive > 0)
            {
                p += MqttProperties.WriteUInt16(properties[p..], MqttProperties.ServerKeepAlive, serverKeepAlive);
            }
            if (responseInfo is not null)
            {
                p += MqttProperties.WriteBytes(properties[p..], MqttProperties.ResponseInfo, Encoding.UTF8.GetBytes(responseInfo));
            }
        }
        return Packet(MqttPackets.ConnAck, [present ? (byte)1 : (byte)0, reason], properties[..p]);
    }

    /// <summary>DISCONNECT with a reason code and, when the client did not turn problem information off, the reason text.</summary>
    public static byte[] Disconnect(byte reason, string? text)
    {
        if (text is null)
        {
            return [MqttPackets.Disconnect, 1, reason];
        }
        var bytes = Encoding.UTF8.GetBytes(text);
        var length = Math.Min(bytes.Length, 400);
        Span<byte> properties = stackalloc byte[3 + length];
        var p = MqttProperties.WriteBytes(properties, MqttProperties.ReasonString, bytes.AsSpan(0, length));
        return Packet(MqttPackets.Disconnect, [reason], properties[..p]);
    }

    /// <summary>SUBACK or UNSUBACK: packet identifier, no properties, one reason code per filter.</summary>
    public static byte[] Acks(byte type, ushort packetId, ReadOnlySpan<byte> codes)
    {
        Span<byte> head = [(byte)(packetId >> 8), (byte)packetId];
        var packet = Packet(type, head, default, codes.Length);
        codes.CopyTo(packet.AsSpan(packet.Length - codes.Length));
        return packet;
    }

    /// <summary>
    /// A PUBLISH to an MQTT 5 client: the 3.1.1 layout with the property section after the packet identifier.
    /// <paramref name="destination"/> holds <see cref="PublishSize"/> bytes.
    /// </summary>
    public static int WritePublish(Span<byte> destination, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> properties, ReadOnlySpan<byte> payload,
        byte qos, ushort packetId, bool dup, bool retain)
    {
        var remaining = Remaining(topic.Length, properties.Length, payload.Length, qos);
        var flags = (byte)(qos << 1);
        if (dup)
        {
            flags |= MqttPackets.PubFlagDup;
        }
        if (retain)
        {
            flags |= MqttPackets.PubFlagRetain;
        }
        destination[0] = (byte)(MqttPackets.Publish | flags);
        var p = 1 + MqttPackets.WriteVarInt(destination[1..], remaining);
        p += MqttProperties.WriteField(destination[p..], topic);
        if (qos > 0)
        {
            BinaryPrimitives.WriteUInt16BigEndian(destination[p..], packetId);
            p += 2;
        }
        p += MqttPackets.WriteVarInt(destination[p..], properties.Length);
        properties.CopyTo(destination[p..]);
        p += properties.Length;
        payload.CopyTo(destination[p..]);
        return p + payload.Length;
    }

    public static int PublishSize(int topicLength, int propertiesLength, int payloadLength, byte qos)
    {
        var remaining = Remaining(topicLength, propertiesLength, payloadLength, qos);
        return 1 + MqttPackets.VarIntSize(remaining) + remaining;
    }

    private static int Remaining(int topicLength, int propertiesLength, int payloadLength, byte qos) =>
        2 + topicLength + (qos > 0 ? 2 : 0) + MqttPackets.VarIntSize(propertiesLength) + propertiesLength + payloadLength;

    private static byte[] Packet(byte type, ReadOnlySpan<byte> head, ReadOnlySpan<byte> properties, int tail = 0)
    {
        var remaining = head.Length + MqttPackets.VarIntSize(properties.Length) + properties.Length + tail;
        var packet = new byte[1 + MqttPackets.VarIntSize(remaining) + remaining];
        packet[0] = type;
        var p = 1 + MqttPackets.WriteVarInt(packet.AsSpan(1), remaining);
        head.CopyTo(packet.AsSpan(p));
        p += head.Length;
        p += MqttPackets.WriteVarInt(packet.AsSpan(p), properties.Length);
        properties.CopyTo(packet.AsSpan(p));
        return packet;
    }
}
