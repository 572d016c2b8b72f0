using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Subscriptions;

namespace Nats.Server.Mqtt;

/// <summary>One PUBLISH as it arrived; the spans point into the packet and the caller's subject scratch.</summary>
internal readonly ref struct MqttPublish
{
    public required ReadOnlySpan<byte> Topic { get; init; }
    public required ReadOnlySpan<byte> Subject { get; init; }
    public required ReadOnlySpan<byte> Payload { get; init; }
    public required byte Qos { get; init; }
    public required bool Retain { get; init; }
    public required ushort PacketId { get; init; }
}

/// <summary>
/// The decoding of client packets, apart from the connection that acts on them so that it can be fuzzed and tested
/// on bytes alone (CONNECT is <see cref="MqttConnect.Parse"/>). Every violation is an <see cref="MqttProtocolException"/>
/// with Go's mqttParse text.
/// </summary>
internal static class MqttDecoder
{
    /// <summary>The type byte and at most four bytes of remaining length.</summary>
    public const int MaxFixedHeader = 5;

    /// <summary>
    /// Reads the remaining length after the type byte of <paramref name="head"/>: returns the fixed header's size,
    /// or 0 when <paramref name="head"/> ends inside it.
    /// </summary>
    public static int ReadRemainingLength(ReadOnlySpan<byte> head, out int length)
    {
        length = 0;
        var multiplier = 1;
        var position = 1;
        while (true)
        {
            if (position >= head.Length)
            {
                return 0;
            }
            var b = head[position++];
            length += (b & 0x7f) * multiplier;
            if ((b & 0x80) == 0)
            {
                return position;
            }
            multiplier *= 0x80;
            if (multiplier > 0x200000)
            {
                throw new MqttProtocolException("malformed variable int");
            }
        }
    }

    /// <summary>
    /// Go's mqttParsePub: QoS, topic (converted to a subject in <paramref name="subjectScratch"/>, grown when too
    /// small), packet identifier and payload, without allocating for a topic that fits the scratch.
    /// </summary>
    public static MqttPublish ParsePublish(byte flags, ReadOnlySpan<byte> body, ref byte[] subjectScratch)
    {
        var qos = (byte)((flags & MqttPackets.PubFlagQos) >> 1);
        if (qos > 2)
        {
            throw new MqttProtocolException($"publish QoS={qos} not supported");
        }
        var r = new MqttReader(body);
        var topic = r.ReadBytes("topic");
        if (topic.IsEmpty)
        {
            throw new MqttProtocolException("topic cannot be empty");
        }
        if (subjectScratch.Length < topic.Length * 2 + 1)
        {
            subjectScratch = new byte[topic.Length * 2 + 1];
        }
        var subjectLength = MqttTopics.ToSubjectBytes(topic, subjectScratch, out var error);
        if (subjectLength < 0)
        {
            throw new MqttProtocolException(error!);
        }
        ushort packetId = 0;
        if (qos > 0)
        {
            packetId = r.ReadUInt16("packet identifier");
            if (packetId == 0)
            {
                throw new MqttProtocolException($"with QoS={qos} packet identifier cannot be 0");
            }
        }
        return new MqttPublish
        {
            Topic = topic,
            Subject = subjectScratch.AsSpan(0, subjectLength),
            Payload = r.Rest(),
            Qos = qos,
            Retain = (flags & MqttPackets.PubFlagRetain) != 0,
            PacketId = packetId,
        };
    }

    /// <summary>
    /// Go's mqttParseSubsOrUnsubs: a filter that does not convert is logged on <paramref name="connection"/>'s behalf
    /// and kept as null, to be refused in SUBACK.
    /// </summary>
    public static List<(string? Subject, byte Qos)> ParseFilters(byte header, ReadOnlySpan<byte> body, bool subscribe, out ushort packetId, ILogger logger, object connection)
    {
        var action = subscribe ? "" : "un";
        if ((header & 0x0f) != 0x02)
        {
            throw new MqttProtocolException($"wrong {action}subscribe reserved flags: {header & 0x0f:x}");
        }
        var r = new MqttReader(body);
        try
        {
            packetId = r.ReadUInt16("packet identifier");
        }
        catch (MqttProtocolException e)
        {
            throw new MqttProtocolException($"reading packet identifier: {e.Message}");
        }
        var filters = new List<(string?, byte)>();
        while (r.HasMore)
        {
            var topic = r.ReadBytes("topic filter");
            if (topic.IsEmpty)
            {
                throw new MqttProtocolException("topic filter cannot be empty");
            }
            if (!System.Text.Unicode.Utf8.IsValid(topic))
            {
                throw new MqttProtocolException($"invalid utf8 for topic filter {GoQuote.Quote(topic)}");
            }
            var subject = MqttTopics.ToSubject(topic, wildcardsAllowed: true, out var error);
            if (subject is null)
            {
                logger.LogError("{Connection} - invalid topic {Topic}: {Error}", connection, GoQuote.Quote(topic), error);
            }
            else if (!SubjectValidation.IsValidSubject(System.Text.Encoding.UTF8.GetBytes(subject)))
            {
                logger.LogError("{Connection} - invalid subject {Subject}", connection, subject);
                subject = null;
            }
            byte qos = 0;
            if (subscribe)
            {
                qos = r.ReadByte("QoS");
                if (qos > 2)
                {
                    throw new MqttProtocolException($"subscribe QoS value must be 0, 1 or 2, got {qos}");
                }
            }
            filters.Add((subject, qos));
        }
        if (filters.Count == 0)
        {
            throw new MqttProtocolException($"{action}subscribe protocol must contain at least 1 topic filter");
        }
        return filters;
    }
}
