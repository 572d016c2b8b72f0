using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Subscriptions;
using Nats.Subjects;

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

    /// <summary>MQTT 5 only: the PUBLISH properties (default for 3.1.1).</summary>
    public MqttMessageProperties Properties { get; init; }
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
    /// <remarks>With <paramref name="aliases"/> (an MQTT 5 connection's) the properties are read and a topic alias resolved.</remarks>
    public static MqttPublish ParsePublish(byte flags, ReadOnlySpan<byte> body, ref byte[] subjectScratch, MqttTopicAliases? aliases = null)
    {
        var qos = (byte)((flags & MqttPackets.PubFlagQos) >> 1);
        if (qos > 2)
        {
            throw new MqttProtocolException($"publish QoS={qos} not supported");
        }
        var r = new MqttReader(body);
        var topic = r.ReadBytes("topic");
        var subjectLength = 0;
        if (aliases is null)
        {
            // 3.1.1 keeps Go's order of checks: the topic, then the packet identifier.
            subjectLength = ToSubject(topic, ref subjectScratch);
        }
        ushort packetId = 0;
        if (qos > 0)
        {
            packetId = r.ReadUInt16("packet identifier");
            if (packetId == 0)
            {
                throw new MqttProtocolException($"with QoS={qos} packet identifier cannot be 0", reason: MqttReasonCodes.ProtocolError);
            }
        }
        var properties = default(MqttMessageProperties);
        if (aliases is not null)
        {
            properties = MqttMessageProperties.Parse(r.ReadProperties(), MqttProperties.InPublish, "PUBLISH");
            if (properties.TopicAlias != 0)
            {
                topic = aliases.Resolve(properties.TopicAlias, topic);
            }
            subjectLength = ToSubject(topic, ref subjectScratch);
        }
        return new MqttPublish
        {
            Topic = topic,
            Subject = subjectScratch.AsSpan(0, subjectLength),
            Payload = r.Rest(),
            Qos = qos,
            Retain = (flags & MqttPackets.PubFlagRetain) != 0,
            PacketId = packetId,
            Properties = properties,
        };
    }

    private static int ToSubject(ReadOnlySpan<byte> topic, ref byte[] subjectScratch)
    {
        if (topic.IsEmpty)
        {
            throw new MqttProtocolException("topic cannot be empty", reason: MqttReasonCodes.ProtocolError);
        }
        if (subjectScratch.Length < topic.Length * 2 + 1)
        {
            subjectScratch = new byte[topic.Length * 2 + 1];
        }
        var subjectLength = MqttTopics.ToSubjectBytes(topic, subjectScratch, out var error);
        return subjectLength >= 0 ? subjectLength : throw new MqttProtocolException(error!, reason: MqttReasonCodes.TopicNameInvalid);
    }

    /// <summary>
    /// Go's mqttParseSubsOrUnsubs: a filter that does not convert is logged on <paramref name="connection"/>'s behalf
    /// and kept with a null subject, to be refused in SUBACK. <paramref name="v5"/>: the MQTT 5 layout (properties
    /// after the packet identifier, subscription options, <c>$share/&lt;group&gt;/</c> filters).
    /// </summary>
    public static List<MqttFilterRequest> ParseFilters(byte header, ReadOnlySpan<byte> body, bool subscribe, out ushort packetId, ILogger logger, object connection,
        bool v5 = false)
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
        var subscriptionId = 0;
        if (v5)
        {
            var properties = new MqttPropertyReader(r.ReadProperties(), subscribe ? MqttProperties.InSubscribe : MqttProperties.InUnsubscribe,
                subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE");
            while (properties.Next(out var property))
            {
                if (property.Id == MqttProperties.SubscriptionId)
                {
                    subscriptionId = property.Number is > 0 and <= 268435455 ? (int)property.Number
                        : throw new MqttProtocolException("subscription identifier 0", reason: MqttReasonCodes.ProtocolError);
                }
            }
        }
        var filters = new List<MqttFilterRequest>();
        while (r.HasMore)
        {
            var topic = r.ReadBytes("topic filter");
            if (topic.IsEmpty)
            {
                throw new MqttProtocolException("topic filter cannot be empty", reason: MqttReasonCodes.ProtocolError);
            }
            if (!System.Text.Unicode.Utf8.IsValid(topic))
            {
                throw new MqttProtocolException($"invalid utf8 for topic filter {GoQuote.Quote(topic)}");
            }
            string? group = null;
            var refusal = MqttPackets.SubAckFailure;
            if (v5 && MqttSharedFilter.TryParse(topic, out group, out var filter))
            {
                if (group is null)
                {
                    topic = default;
                }
                else
                {
                    topic = filter;
                }
            }
            string? subject = null;
            if (topic.IsEmpty)
            {
                logger.LogError("{Connection} - invalid shared subscription filter", connection);
                refusal = MqttReasonCodes.TopicFilterInvalid;
            }
            else
            {
                subject = MqttTopics.ToSubject(topic, wildcardsAllowed: true, out var error);
                if (subject is null)
                {
                    logger.LogError("{Connection} - invalid topic {Topic}: {Error}", connection, GoQuote.Quote(topic), error);
                    refusal = MqttReasonCodes.TopicFilterInvalid;
                }
                else if (!SubjectRules.IsValid(subject))
                {
                    logger.LogError("{Connection} - invalid subject {Subject}", connection, subject);
                    subject = null;
                    refusal = MqttReasonCodes.TopicFilterInvalid;
                }
            }
            byte qos = 0;
            var options = default(MqttFilterOptions);
            byte retainHandling = 0;
            if (subscribe)
            {
                var flags = r.ReadByte("QoS");
                qos = (byte)(v5 ? flags & 0x03 : flags);
                if (qos > 2)
                {
                    throw new MqttProtocolException($"subscribe QoS value must be 0, 1 or 2, got {qos}");
                }
                if (v5)
                {
                    retainHandling = (byte)((flags >> 4) & 0x03);
                    if ((flags & 0xc0) != 0 || retainHandling == 3)
                    {
                        throw new MqttProtocolException($"invalid subscription options 0x{flags:x2}");
                    }
                    var noLocal = (flags & 0x04) != 0;
                    if (noLocal && group is not null)
                    {
                        throw new MqttProtocolException("no local on a shared subscription", reason: MqttReasonCodes.ProtocolError);
                    }
                    options = new MqttFilterOptions(noLocal, (flags & 0x08) != 0, subscriptionId, group);
                }
            }
            else if (group is not null)
            {
                options = new MqttFilterOptions(false, false, 0, group);
            }
            filters.Add(new MqttFilterRequest(subject, qos, options, retainHandling, refusal));
        }
        if (filters.Count == 0)
        {
            throw new MqttProtocolException($"{action}subscribe protocol must contain at least 1 topic filter", reason: MqttReasonCodes.ProtocolError);
        }
        return filters;
    }
}

/// <summary>One filter of a SUBSCRIBE or UNSUBSCRIBE: a null subject is refused with <paramref name="Refusal"/>.</summary>
internal readonly record struct MqttFilterRequest(string? Subject, byte Qos, MqttFilterOptions Options, byte RetainHandling, byte Refusal)
{
    /// <summary>The session's key for it: the subject, or "$share/&lt;group&gt;/&lt;subject&gt;" for a shared subscription.</summary>
    public string Sid(string subject) => Options.Group is { } group ? MqttSharedFilter.Prefix + group + "/" + subject : subject;
}
