using System.Buffers.Binary;

namespace Nats.Server.Mqtt;

/// <summary>MQTT 3.1.1 packet types, flags and return codes (the values Go's mqtt.go names).</summary>
internal static class MqttPackets
{
    public const byte Connect = 0x10;
    public const byte ConnAck = 0x20;
    public const byte Publish = 0x30;
    public const byte PubAck = 0x40;
    public const byte PubRec = 0x50;
    public const byte PubRel = 0x60;
    public const byte PubComp = 0x70;
    public const byte Subscribe = 0x80;
    public const byte SubAck = 0x90;
    public const byte Unsubscribe = 0xa0;
    public const byte UnsubAck = 0xb0;
    public const byte PingReq = 0xc0;
    public const byte PingResp = 0xd0;
    public const byte Disconnect = 0xe0;
    public const byte TypeMask = 0xf0;

    public const byte PubFlagRetain = 0x01;
    public const byte PubFlagQos = 0x06;
    public const byte PubFlagDup = 0x08;

    public const byte SubAckFailure = 0x80;

    public const byte RcAccepted = 0;
    public const byte RcUnacceptableProtocol = 1;
    public const byte RcIdentifierRejected = 2;
    public const byte RcServerUnavailable = 3;
    public const byte RcBadUserOrPassword = 4;
    public const byte RcNotAuthorized = 5;

    /// <summary>The header Go adds to every MQTT publish so NATS receivers (and QoS 1 delivery) know its QoS.</summary>
    public const string NatsHeader = "Nmqtt-Pub";

    /// <summary>Go's mqttMaxPayloadSize: the largest remaining length four bytes encode.</summary>
    public const int MaxRemainingLength = 0xFFFFFFF;

    public static int VarIntSize(int value) => value < 128 ? 1 : value < 16384 ? 2 : value < 2097152 ? 3 : 4;

    public static int WriteVarInt(Span<byte> destination, int value)
    {
        var i = 0;
        do
        {
            var b = (byte)(value % 128);
            value /= 128;
            if (value > 0)
            {
                b |= 0x80;
            }
            destination[i++] = b;
        }
        while (value > 0);
        return i;
    }

    /// <summary>Encodes a PUBLISH; returns its length. <paramref name="destination"/> must hold <see cref="PublishSize"/> bytes.</summary>
    public static int WritePublish(Span<byte> destination, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ushort packetId, bool dup, bool retain)
    {
        var remaining = 2 + topic.Length + payload.Length + (qos > 0 ? 2 : 0);
        var flags = (byte)(qos << 1);
        if (dup)
        {
            flags |= PubFlagDup;
        }
        if (retain)
        {
            flags |= PubFlagRetain;
        }
        destination[0] = (byte)(Publish | flags);
        var p = 1 + WriteVarInt(destination[1..], remaining);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)topic.Length);
        p += 2;
        topic.CopyTo(destination[p..]);
        p += topic.Length;
        if (qos > 0)
        {
            BinaryPrimitives.WriteUInt16BigEndian(destination[p..], packetId);
            p += 2;
        }
        payload.CopyTo(destination[p..]);
        return p + payload.Length;
    }

    public static int PublishSize(int topicLength, int payloadLength, byte qos)
    {
        var remaining = 2 + topicLength + payloadLength + (qos > 0 ? 2 : 0);
        return 1 + VarIntSize(remaining) + remaining;
    }
}
