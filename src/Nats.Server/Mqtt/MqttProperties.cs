using System.Buffers.Binary;

namespace Nats.Server.Mqtt;

/// <summary>MQTT 5 property identifiers (specification 2.2.2.2) and the packets each may appear in.</summary>
internal static class MqttProperties
{
    public const byte PayloadFormat = 0x01;
    public const byte MessageExpiry = 0x02;
    public const byte ContentType = 0x03;
    public const byte ResponseTopic = 0x08;
    public const byte CorrelationData = 0x09;
    public const byte SubscriptionId = 0x0B;
    public const byte SessionExpiry = 0x11;
    public const byte AssignedClientId = 0x12;
    public const byte ServerKeepAlive = 0x13;
    public const byte AuthenticationMethod = 0x15;
    public const byte AuthenticationData = 0x16;
    public const byte RequestProblemInfo = 0x17;
    public const byte WillDelay = 0x18;
    public const byte RequestResponseInfo = 0x19;
    public const byte ResponseInfo = 0x1A;
    public const byte ReasonString = 0x1F;
    public const byte ReceiveMaximum = 0x21;
    public const byte TopicAliasMaximum = 0x22;
    public const byte TopicAlias = 0x23;
    public const byte MaximumQos = 0x24;
    public const byte RetainAvailable = 0x25;
    public const byte UserProperty = 0x26;
    public const byte MaximumPacketSize = 0x27;
    public const byte WildcardAvailable = 0x28;
    public const byte SubscriptionIdAvailable = 0x29;
    public const byte SharedAvailable = 0x2A;

    /// <summary>What a client may send in each packet: a property outside its set makes the packet malformed [MQTT-2.2.2-2].</summary>
    public const ulong InConnect = 1UL << SessionExpiry | 1UL << AuthenticationMethod | 1UL << AuthenticationData | 1UL << RequestProblemInfo
        | 1UL << RequestResponseInfo | 1UL << ReceiveMaximum | 1UL << TopicAliasMaximum | 1UL << UserProperty | 1UL << MaximumPacketSize;

    public const ulong InWill = 1UL << PayloadFormat | 1UL << MessageExpiry | 1UL << ContentType | 1UL << ResponseTopic | 1UL << CorrelationData
        | 1UL << WillDelay | 1UL << UserProperty;

    public const ulong InPublish = 1UL << PayloadFormat | 1UL << MessageExpiry | 1UL << ContentType | 1UL << ResponseTopic | 1UL << CorrelationData
        | 1UL << TopicAlias | 1UL << UserProperty;

    public const ulong InAck = 1UL << ReasonString | 1UL << UserProperty;
    public const ulong InSubscribe = 1UL << SubscriptionId | 1UL << UserProperty;
    public const ulong InUnsubscribe = 1UL << UserProperty;
    public const ulong InDisconnect = 1UL << SessionExpiry | 1UL << ReasonString | 1UL << UserProperty | 1UL << 0x1C;
    public const ulong InAuth = 1UL << AuthenticationMethod | 1UL << AuthenticationData | 1UL << ReasonString | 1UL << UserProperty;

    public static int WriteByte(Span<byte> destination, byte id, byte value)
    {
        destination[0] = id;
        destination[1] = value;
        return 2;
    }

    public static int WriteUInt16(Span<byte> destination, byte id, ushort value)
    {
        destination[0] = id;
        BinaryPrimitives.WriteUInt16BigEndian(destination[1..], value);
        return 3;
    }

    public static int WriteUInt32(Span<byte> destination, byte id, uint value)
    {
        destination[0] = id;
        BinaryPrimitives.WriteUInt32BigEndian(destination[1..], value);
        return 5;
    }

    public static int WriteVarInt(Span<byte> destination, byte id, int value)
    {
        destination[0] = id;
        return 1 + MqttPackets.WriteVarInt(destination[1..], value);
    }

    /// <summary>A UTF-8 string or binary data property: id, two-byte length, bytes.</summary>
    public static int WriteBytes(Span<byte> destination, byte id, ReadOnlySpan<byte> value)
    {
        destination[0] = id;
        return 1 + WriteField(destination[1..], value);
    }

    public static int WritePair(Span<byte> destination, byte id, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        destination[0] = id;
        var p = 1 + WriteField(destination[1..], name);
        return p + WriteField(destination[p..], value);
    }

    public static int WriteField(Span<byte> destination, ReadOnlySpan<byte> value)
    {
        BinaryPrimitives.WriteUInt16BigEndian(destination, (ushort)value.Length);
        value.CopyTo(destination[2..]);
        return 2 + value.Length;
    }
}

/// <summary>One property as read: an integer value, or one or two (user property) byte strings.</summary>
internal readonly ref struct MqttProperty
{
    public required byte Id { get; init; }
    public uint Number { get; init; }
    public ReadOnlySpan<byte> Value { get; init; }
    public ReadOnlySpan<byte> Name { get; init; }
}

/// <summary>
/// Walks one property section, checking what the specification makes a malformed packet (an identifier not
/// allowed in the packet, a truncated value, invalid UTF-8: 0x81) or a protocol error (a property repeated
/// that may appear once, an out-of-range value: 0x82).
/// </summary>
internal ref struct MqttPropertyReader(ReadOnlySpan<byte> section, ulong allowed, string packet)
{
    private MqttReader _reader = new(section);
    private ulong _seen;

    public bool Next(out MqttProperty property)
    {
        if (!_reader.HasMore)
        {
            property = default;
            return false;
        }
        var id = _reader.ReadVarInt("property identifier");
        if (id >= 64 || (allowed & 1UL << id) == 0)
        {
            throw new MqttProtocolException($"property 0x{id:x2} not allowed in {packet}", reason: MqttReasonCodes.MalformedPacket);
        }
        var bit = 1UL << id;
        if ((_seen & bit) != 0 && id != MqttProperties.UserProperty)
        {
            throw new MqttProtocolException($"property 0x{id:x2} included more than once in {packet}", reason: MqttReasonCodes.ProtocolError);
        }
        _seen |= bit;
        var b = (byte)id;
        switch (b)
        {
            case MqttProperties.PayloadFormat or MqttProperties.RequestProblemInfo or MqttProperties.RequestResponseInfo:
                var flag = _reader.ReadByte("property");
                if (flag > 1)
                {
                    throw new MqttProtocolException($"property 0x{id:x2} must be 0 or 1, got {flag}", reason: MqttReasonCodes.ProtocolError);
                }
                property = new MqttProperty { Id = b, Number = flag };
                return true;
            case MqttProperties.MessageExpiry or MqttProperties.SessionExpiry or MqttProperties.WillDelay or MqttProperties.MaximumPacketSize:
                property = new MqttProperty { Id = b, Number = _reader.ReadUInt32("property") };
                return true;
            case MqttProperties.ReceiveMaximum or MqttProperties.TopicAliasMaximum or MqttProperties.TopicAlias or MqttProperties.ServerKeepAlive:
                property = new MqttProperty { Id = b, Number = _reader.ReadUInt16("property") };
                return true;
            case MqttProperties.SubscriptionId:
                property = new MqttProperty { Id = b, Number = (uint)_reader.ReadVarInt("subscription identifier") };
                return true;
            case MqttProperties.CorrelationData or MqttProperties.AuthenticationData:
                property = new MqttProperty { Id = b, Value = _reader.ReadBytes("property") };
                return true;
            case MqttProperties.UserProperty:
                var name = Utf8(_reader.ReadBytes("user property name"));
                property = new MqttProperty { Id = b, Name = name, Value = Utf8(_reader.ReadBytes("user property value")) };
                return true;
            default:
                // The remaining allowed identifiers are all UTF-8 strings.
                property = new MqttProperty { Id = b, Value = Utf8(_reader.ReadBytes("property")) };
                return true;
        }
    }

    private static ReadOnlySpan<byte> Utf8(ReadOnlySpan<byte> value) =>
        System.Text.Unicode.Utf8.IsValid(value) && !value.Contains((byte)0) ? value
            : throw new MqttProtocolException("invalid utf8 in property", reason: MqttReasonCodes.MalformedPacket);
}
