namespace Nats.Server.Mqtt;

/// <summary>
/// The MQTT 5 tails of packets whose 3.1.1 form the connection already reads: the reason code and properties of
/// a client's DISCONNECT and of its PUBACK/PUBREC/PUBREL/PUBCOMP, checked as the specification lists them.
/// </summary>
internal static class MqttV5Disconnect
{
    /// <summary>The AUTH packet type, which MQTT 5 added.</summary>
    public const byte Auth = 0xf0;

    /// <summary>
    /// Reads a client's DISCONNECT (a session expiry it may change); returns whether the will is discarded
    /// (every reason but 0x04, Disconnect with Will Message).
    /// </summary>
    public static bool Read(ReadOnlySpan<byte> body, MqttV5Link link)
    {
        if (body.IsEmpty)
        {
            return true;
        }
        var r = new MqttReader(body);
        var reason = r.ReadByte("reason code");
        if (reason is not (0x00 or 0x04 or 0x80 or 0x81 or 0x82 or 0x83 or 0x87 or 0x90 or 0x93 or 0x94 or 0x95 or 0x96 or 0x97 or 0x98 or 0x99))
        {
            throw new MqttProtocolException($"reason code 0x{reason:x2} not allowed in DISCONNECT", reason: MqttReasonCodes.ProtocolError);
        }
        if (r.HasMore)
        {
            var reader = new MqttPropertyReader(r.ReadProperties(), MqttProperties.InDisconnect, "DISCONNECT");
            while (reader.Next(out var property))
            {
                if (property.Id == MqttProperties.SessionExpiry)
                {
                    // [MQTT-3.14.2-2]: a session that was to end with the connection cannot be extended here.
                    if (link.SessionExpiry == 0 && property.Number != 0)
                    {
                        throw new MqttProtocolException("session expiry set in DISCONNECT after 0 in CONNECT", reason: MqttReasonCodes.ProtocolError);
                    }
                    link.SessionExpiry = property.Number;
                }
            }
        }
        return reason != MqttReasonCodes.DisconnectWithWill;
    }

    /// <summary>An acknowledgement's optional reason code and properties (MQTT 5; nothing to check for 3.1.1).</summary>
    public static void CheckAck(ReadOnlySpan<byte> body, MqttV5Link? link)
    {
        if (link is null || body.Length <= 2)
        {
            return;
        }
        var r = new MqttReader(body);
        r.ReadUInt16("packet identifier");
        var reason = r.ReadByte("reason code");
        if (reason is not (0x00 or 0x10 or 0x80 or 0x83 or 0x87 or 0x90 or 0x91 or 0x92 or 0x97 or 0x99))
        {
            throw new MqttProtocolException($"reason code 0x{reason:x2} not allowed in an acknowledgement", reason: MqttReasonCodes.ProtocolError);
        }
        if (r.HasMore)
        {
            var reader = new MqttPropertyReader(r.ReadProperties(), MqttProperties.InAck, "acknowledgement");
            while (reader.Next(out _))
            {
            }
        }
        if (r.HasMore)
        {
            throw new MqttProtocolException("bytes after the properties of an acknowledgement");
        }
    }
}
