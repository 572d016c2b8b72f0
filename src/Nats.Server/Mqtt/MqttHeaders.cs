namespace Nats.Server.Mqtt;

/// <summary>Go's MQTT headers on NATS-side messages, read without allocating.</summary>
internal static class MqttHeaders
{
    /// <summary>The QoS a NATS-side message carries in Go's "Nmqtt-Pub" header (0 without it).</summary>
    public static byte QosFromHeaders(ReadOnlySpan<byte> headers)
    {
        if (headers.IsEmpty)
        {
            return 0;
        }
        var index = headers.IndexOf("Nmqtt-Pub:"u8);
        if (index < 0)
        {
            return 0;
        }
        var rest = headers[(index + 10)..].TrimStart((byte)' ');
        return rest.Length > 0 && rest[0] is (byte)'1' or (byte)'2' ? (byte)(rest[0] - '0') : (byte)0;
    }

    /// <summary>The packet id in Go's "Nmqtt-PubRel" header (0 without it).</summary>
    public static ushort PubRelId(ReadOnlySpan<byte> headers)
    {
        var index = headers.IndexOf("Nmqtt-PubRel:"u8);
        if (index < 0)
        {
            return 0;
        }
        var rest = headers[(index + 13)..].TrimStart((byte)' ');
        return System.Buffers.Text.Utf8Parser.TryParse(rest, out ushort pi, out _) ? pi : (ushort)0;
    }

    /// <summary>The MQTT 5 header lines of a message held in $MQTT_qos2in (after its Nmqtt-Pub, Nmqtt-Subject and Nmqtt-Retain lines).</summary>
    public static ReadOnlySpan<byte> LinesAfterQos2(ReadOnlySpan<byte> headers)
    {
        var index = headers.IndexOf("Nmqtt-Subject:"u8);
        if (index < 0)
        {
            return default;
        }
        var rest = headers[index..];
        rest = rest[(rest.IndexOf("\r\n"u8) + 2)..];
        if (rest.StartsWith("Nmqtt-Retain:"u8))
        {
            rest = rest[(rest.IndexOf("\r\n"u8) + 2)..];
        }
        return rest.Length >= 2 ? rest[..^2] : default;
    }
}
