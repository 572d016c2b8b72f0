using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Mqtt;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The MQTT packet decoding as a connection's read loop does it: fixed header and remaining length, then CONNECT,
/// PUBLISH (topic to subject), SUBSCRIBE/UNSUBSCRIBE filters and the packet identifier of the acks. A CONNECT of
/// level 5 switches the rest of the input to MQTT 5: property sections, topic aliases, subscription options, the
/// reason codes of acks and DISCONNECT, and a PUBLISH's properties turned into NATS header lines and back into the
/// properties of a delivery (into buffers of the sizes the server allocates). Oracle: packets or an
/// <see cref="MqttProtocolException"/> (Go's mqttParse errors, MQTT 5 reason codes), nothing else.
/// </summary>
internal static class MqttTarget
{
    private static byte[] _subjectScratch = new byte[16];
    private static MqttTopicAliases? _aliases;
    private static MqttV5Link? _link;

    public static void Run(ReadOnlySpan<byte> input)
    {
        _aliases = null;
        _link = null;
        try
        {
            while (!input.IsEmpty)
            {
                var headerLength = MqttDecoder.ReadRemainingLength(input[..Math.Min(input.Length, MqttDecoder.MaxFixedHeader)], out var length);
                if (headerLength == 0 || length < 0 || input.Length - headerLength < length)
                {
                    return;
                }
                Decode(input[0], input.Slice(headerLength, length));
                input = input[(headerLength + length)..];
            }
        }
        catch (MqttProtocolException)
        {
        }
    }

    private static void Decode(byte header, ReadOnlySpan<byte> body)
    {
        switch ((byte)(header & MqttPackets.TypeMask))
        {
            case MqttPackets.Connect:
                var connect = MqttConnect.Parse(body, static () => "generated");
                if (connect.IsV5)
                {
                    _aliases = new MqttTopicAliases();
                    _link = new MqttV5Link(connect, 2, 1 << 20);
                }
                break;
            case MqttPackets.Publish:
                var publish = MqttDecoder.ParsePublish((byte)(header & 0x0f), body, ref _subjectScratch, _aliases);
                // Delivery turns the subject back into a topic (Go's mqttNATSSubjectToMQTTTopic).
                var topic = new byte[publish.Subject.Length * 2 + 1];
                MqttTopics.ToTopic(publish.Subject, topic);
                if (_link is not null)
                {
                    if (publish.Qos > 0)
                    {
                        _link.Received(publish.Qos, publish.PacketId);
                    }
                    RoundTrip(publish.Properties);
                }
                break;
            case MqttPackets.Subscribe:
                MqttDecoder.ParseFilters(header, body, subscribe: true, out _, NullLogger.Instance, "fuzz", _link is not null);
                break;
            case MqttPackets.Unsubscribe:
                MqttDecoder.ParseFilters(header, body, subscribe: false, out _, NullLogger.Instance, "fuzz", _link is not null);
                break;
            case MqttPackets.PubAck or MqttPackets.PubRec or MqttPackets.PubRel or MqttPackets.PubComp:
                new MqttReader(body).ReadUInt16("packet identifier");
                MqttV5Disconnect.CheckAck(body, _link);
                break;
            case MqttPackets.Disconnect when _link is not null:
                MqttV5Disconnect.Read(body, _link);
                break;
        }
    }

    /// <summary>Properties to header lines (as the publish path builds them) and back to delivery properties (as the writer encodes them).</summary>
    private static void RoundTrip(in MqttMessageProperties properties)
    {
        var lines = new byte[MqttV5Headers.MaxLinesSize(properties)];
        var length = MqttV5Headers.AppendLines(properties, lines, 1_700_000_000_000);
        byte[] headers = [.. "NATS/1.0\r\nNmqtt-Pub:1\r\n"u8, .. lines.AsSpan(0, length), .. "\r\n"u8];
        var reply = MqttV5Headers.ReplyIn(lines.AsSpan(0, length));
        var encoded = new byte[MqttV5Headers.MaxPropertiesSize(headers.Length, reply.Length)];
        MqttV5Headers.EncodeProperties(headers, reply, 268435455, 1_700_000_000_000, encoded, out var written);
        if (written > encoded.Length)
        {
            throw new OracleException("properties written past their buffer");
        }
        var reader = new MqttPropertyReader(encoded.AsSpan(0, written), ulong.MaxValue, "delivery");
        while (reader.Next(out _))
        {
        }
    }
}
