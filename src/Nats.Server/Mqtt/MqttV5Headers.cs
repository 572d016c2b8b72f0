using System.Buffers.Binary;
using System.Buffers.Text;

namespace Nats.Server.Mqtt;

/// <summary>The properties of an MQTT 5 PUBLISH (or will) that travel with the message, as read from the packet.</summary>
internal ref struct MqttMessageProperties
{
    public ushort TopicAlias;
    public bool HasExpiry;
    public uint Expiry;
    public bool Utf8Payload;
    public uint WillDelay;
    public ReadOnlySpan<byte> ContentType;
    public ReadOnlySpan<byte> ResponseTopic;
    public ReadOnlySpan<byte> CorrelationData;
    public ReadOnlySpan<byte> Section;
    public bool HasUserProperties;

    /// <summary>Anything that becomes a NATS header or reply subject.</summary>
    public readonly bool Travels => HasExpiry || Utf8Payload || !ContentType.IsEmpty || !ResponseTopic.IsEmpty || !CorrelationData.IsEmpty || HasUserProperties;

    public static MqttMessageProperties Parse(ReadOnlySpan<byte> section, ulong allowed, string packet)
    {
        var result = new MqttMessageProperties { Section = section };
        var reader = new MqttPropertyReader(section, allowed, packet);
        while (reader.Next(out var property))
        {
            switch (property.Id)
            {
                case MqttProperties.TopicAlias:
                    if (property.Number == 0)
                    {
                        throw new MqttProtocolException("topic alias 0 is not allowed", reason: MqttReasonCodes.TopicAliasInvalid);
                    }
                    result.TopicAlias = (ushort)property.Number;
                    break;
                case MqttProperties.MessageExpiry:
                    result.HasExpiry = true;
                    result.Expiry = property.Number;
                    break;
                case MqttProperties.PayloadFormat:
                    result.Utf8Payload = property.Number == 1;
                    break;
                case MqttProperties.WillDelay:
                    result.WillDelay = property.Number;
                    break;
                case MqttProperties.ContentType:
                    result.ContentType = property.Value;
                    break;
                case MqttProperties.ResponseTopic:
                    if (property.Value.IsEmpty || property.Value.IndexOfAny((byte)'+', (byte)'#') >= 0)
                    {
                        throw new MqttProtocolException("response topic must be a topic name", reason: MqttReasonCodes.ProtocolError);
                    }
                    result.ResponseTopic = property.Value;
                    break;
                case MqttProperties.CorrelationData:
                    result.CorrelationData = property.Value;
                    break;
                case MqttProperties.UserProperty:
                    result.HasUserProperties = true;
                    break;
            }
        }
        return result;
    }
}

/// <summary>
/// The mapping between MQTT 5 message properties and NATS headers (docs/COMPATIBILITY.md, MQTT 5): a user
/// property is a header of the same name; content type is <c>Content-Type</c>; the payload format indicator,
/// message expiry (as an absolute deadline), correlation data (base64) and response topic (as a subject) are
/// <c>Nmqtt-*</c> headers; the response topic is also the NATS reply subject. Delivery to an MQTT 5 subscriber
/// maps back, and every other NATS header becomes a user property.
/// </summary>
internal static class MqttV5Headers
{
    public const string Format = "Nmqtt-Format";
    public const string Expires = "Nmqtt-Expires";
    public const string Correlation = "Nmqtt-Corr";
    public const string Reply = "Nmqtt-Reply";

    /// <summary>The bytes <see cref="AppendLines"/> may write at most for <paramref name="properties"/>.</summary>
    public static int MaxLinesSize(in MqttMessageProperties properties) =>
        properties.Section.Length * 2 + properties.CorrelationData.Length * 2 + properties.ResponseTopic.Length * 2 + 128;

    /// <summary>
    /// Writes the header lines ("Name:value\r\n") for <paramref name="properties"/>; user properties whose name
    /// cannot be a NATS header name, or whose value holds CR or LF, are left out.
    /// </summary>
    public static int AppendLines(in MqttMessageProperties properties, Span<byte> destination, long nowMs)
    {
        var p = 0;
        if (properties.HasUserProperties)
        {
            var reader = new MqttPropertyReader(properties.Section, ulong.MaxValue, "properties");
            while (reader.Next(out var property))
            {
                if (property.Id == MqttProperties.UserProperty && IsHeaderName(property.Name) && IsHeaderValue(property.Value)
                    && !property.Name.StartsWith("Nmqtt-"u8))
                {
                    p += Line(destination[p..], property.Name, property.Value);
                }
            }
        }
        if (!properties.ContentType.IsEmpty && IsHeaderValue(properties.ContentType))
        {
            p += Line(destination[p..], "Content-Type"u8, properties.ContentType);
        }
        if (properties.Utf8Payload)
        {
            p += Line(destination[p..], "Nmqtt-Format"u8, "1"u8);
        }
        if (properties.HasExpiry)
        {
            Span<byte> number = stackalloc byte[20];
            Utf8Formatter.TryFormat(nowMs + properties.Expiry * 1000L, number, out var written);
            p += Line(destination[p..], "Nmqtt-Expires"u8, number[..written]);
        }
        if (!properties.CorrelationData.IsEmpty)
        {
            p += Line(destination[p..], "Nmqtt-Corr"u8, default);
            p -= 2;
            Base64.EncodeToUtf8(properties.CorrelationData, destination[p..], out _, out var encoded);
            p += encoded;
            destination[p++] = (byte)'\r';
            destination[p++] = (byte)'\n';
        }
        if (!properties.ResponseTopic.IsEmpty)
        {
            p += Line(destination[p..], "Nmqtt-Reply"u8, default);
            p -= 2;
            var length = MqttTopics.ToSubjectBytes(properties.ResponseTopic, destination[p..], out var error);
            if (length < 0)
            {
                throw new MqttProtocolException($"invalid response topic: {error}", reason: MqttReasonCodes.ProtocolError);
            }
            p += length;
            destination[p++] = (byte)'\r';
            destination[p++] = (byte)'\n';
        }
        return p;
    }

    /// <summary>A message whose MQTT 5 message expiry has passed (never for a header block without Nmqtt-Expires).</summary>
    public static bool IsExpired(ReadOnlySpan<byte> headers)
    {
        // The 3.1.1 blocks ("NATS/1.0\r\nNmqtt-Pub:N\r\n\r\n") are too short to hold it: no search on their path.
        if (headers.Length <= 28)
        {
            return false;
        }
        var value = Value(headers, "Nmqtt-Expires:"u8);
        return !value.IsEmpty && Utf8Parser.TryParse(value, out long deadline, out _) && deadline <= DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    }

    /// <summary>The NATS reply subject inside the lines <see cref="AppendLines"/> wrote (empty without a response topic).</summary>
    public static ReadOnlySpan<byte> ReplyIn(ReadOnlySpan<byte> lines) => Value(lines, "Nmqtt-Reply:"u8);

    /// <summary>
    /// The MQTT 5 properties for a delivery of a message with <paramref name="headers"/> and <paramref name="reply"/>;
    /// false when its message expiry has passed (the message is then not delivered). <paramref name="destination"/>
    /// holds <see cref="MaxPropertiesSize"/> bytes.
    /// </summary>
    public static bool EncodeProperties(ReadOnlySpan<byte> headers, ReadOnlySpan<byte> reply, int subscriptionId, long nowMs, Span<byte> destination, out int length)
    {
        var p = 0;
        length = 0;
        var replyDone = false;
        if (!reply.IsEmpty && !reply.StartsWith("$JS.ACK."u8) && !reply.StartsWith("$MQTT."u8))
        {
            p += WriteTopic(destination[p..], reply);
            replyDone = true;
        }
        if (subscriptionId > 0)
        {
            p += MqttProperties.WriteVarInt(destination[p..], MqttProperties.SubscriptionId, subscriptionId);
        }
        if (headers.Length > 12)
        {
            var rest = headers;
            var first = rest.IndexOf("\r\n"u8);
            rest = first < 0 ? default : rest[(first + 2)..];
            while (!rest.IsEmpty)
            {
                var end = rest.IndexOf("\r\n"u8);
                var line = end < 0 ? rest : rest[..end];
                rest = end < 0 ? default : rest[(end + 2)..];
                var colon = line.IndexOf((byte)':');
                if (colon <= 0)
                {
                    continue;
                }
                var name = line[..colon];
                var value = line[(colon + 1)..].TrimStart((byte)' ');
                if (name.StartsWith("Nmqtt-"u8))
                {
                    if (name.SequenceEqual("Nmqtt-Format"u8))
                    {
                        p += MqttProperties.WriteByte(destination[p..], MqttProperties.PayloadFormat, 1);
                    }
                    else if (name.SequenceEqual("Nmqtt-Expires"u8) && Utf8Parser.TryParse(value, out long deadline, out _))
                    {
                        var left = deadline - nowMs;
                        if (left <= 0)
                        {
                            return false;
                        }
                        p += MqttProperties.WriteUInt32(destination[p..], MqttProperties.MessageExpiry, (uint)((left + 999) / 1000));
                    }
                    else if (name.SequenceEqual("Nmqtt-Corr"u8))
                    {
                        destination[p] = MqttProperties.CorrelationData;
                        if (Base64.DecodeFromUtf8(value, destination[(p + 3)..], out _, out var decoded) == System.Buffers.OperationStatus.Done)
                        {
                            BinaryPrimitives.WriteUInt16BigEndian(destination[(p + 1)..], (ushort)decoded);
                            p += 3 + decoded;
                        }
                    }
                    else if (name.SequenceEqual("Nmqtt-Reply"u8) && !replyDone && !value.IsEmpty)
                    {
                        p += WriteTopic(destination[p..], value);
                        replyDone = true;
                    }
                    continue;
                }
                if (!System.Text.Unicode.Utf8.IsValid(value) || !System.Text.Unicode.Utf8.IsValid(name))
                {
                    continue;
                }
                p += name.SequenceEqual("Content-Type"u8)
                    ? MqttProperties.WriteBytes(destination[p..], MqttProperties.ContentType, value)
                    : MqttProperties.WritePair(destination[p..], MqttProperties.UserProperty, name, value);
            }
        }
        length = p;
        return true;
    }

    /// <summary>Room enough for <see cref="EncodeProperties"/>: header lines grow by at most two bytes each, a topic is at most twice its subject.</summary>
    public static int MaxPropertiesSize(int headers, int reply) => headers * 2 + reply * 2 + 16;

    private static int WriteTopic(Span<byte> destination, ReadOnlySpan<byte> subject)
    {
        destination[0] = MqttProperties.ResponseTopic;
        var length = MqttTopics.ToTopic(subject, destination[3..]);
        BinaryPrimitives.WriteUInt16BigEndian(destination[1..], (ushort)length);
        return 3 + length;
    }

    private static ReadOnlySpan<byte> Value(ReadOnlySpan<byte> lines, ReadOnlySpan<byte> name)
    {
        var index = lines.IndexOf(name);
        if (index < 0)
        {
            return default;
        }
        var rest = lines[(index + name.Length)..];
        var end = rest.IndexOf("\r\n"u8);
        return end < 0 ? rest : rest[..end];
    }

    private static int Line(Span<byte> destination, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        name.CopyTo(destination);
        var p = name.Length;
        destination[p++] = (byte)':';
        value.CopyTo(destination[p..]);
        p += value.Length;
        destination[p++] = (byte)'\r';
        destination[p++] = (byte)'\n';
        return p;
    }

    private static bool IsHeaderName(ReadOnlySpan<byte> name)
    {
        if (name.IsEmpty)
        {
            return false;
        }
        foreach (var b in name)
        {
            if (b <= 32 || b >= 127 || b == (byte)':')
            {
                return false;
            }
        }
        return true;
    }

    private static bool IsHeaderValue(ReadOnlySpan<byte> value) => value.IndexOfAny((byte)'\r', (byte)'\n') < 0;
}
