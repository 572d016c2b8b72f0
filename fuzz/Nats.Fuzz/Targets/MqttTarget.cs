using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Mqtt;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The MQTT packet decoding as a connection's read loop does it: fixed header and remaining length, then CONNECT,
/// PUBLISH (topic to subject), SUBSCRIBE/UNSUBSCRIBE filters and the packet identifier of the acks. Oracle: packets
/// or an <see cref="MqttProtocolException"/> (Go's mqttParse errors), nothing else.
/// </summary>
internal static class MqttTarget
{
    private static byte[] _subjectScratch = new byte[16];

    public static void Run(ReadOnlySpan<byte> input)
    {
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
                MqttConnect.Parse(body, static () => "generated");
                break;
            case MqttPackets.Publish:
                var publish = MqttDecoder.ParsePublish((byte)(header & 0x0f), body, ref _subjectScratch);
                // Delivery turns the subject back into a topic (Go's mqttNATSSubjectToMQTTTopic).
                var topic = new byte[publish.Subject.Length * 2 + 1];
                MqttTopics.ToTopic(publish.Subject, topic);
                break;
            case MqttPackets.Subscribe:
                MqttDecoder.ParseFilters(header, body, subscribe: true, out _, NullLogger.Instance, "fuzz");
                break;
            case MqttPackets.Unsubscribe:
                MqttDecoder.ParseFilters(header, body, subscribe: false, out _, NullLogger.Instance, "fuzz");
                break;
            case MqttPackets.PubAck or MqttPackets.PubRec or MqttPackets.PubRel or MqttPackets.PubComp:
                new MqttReader(body).ReadUInt16("packet identifier");
                break;
        }
    }
}
