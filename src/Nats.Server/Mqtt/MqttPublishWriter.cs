using Nats.Server.Clients;
using Nats.Server.Delivery;

namespace Nats.Server.Mqtt;

/// <summary>
/// Encodes a PUBLISH for a subscriber's connection into its <see cref="MqttOutbound"/> (on the
/// publisher's thread, no allocation up to 512 bytes), which stalls the publisher on it when full.
/// </summary>
internal static class MqttPublishWriter
{
    [ThreadStatic]
    private static byte[]? t_scratch;

    [ThreadStatic]
    private static byte[]? t_properties;

    /// <summary>A per-thread buffer for the topic converted from a subject.</summary>
    public static byte[] TopicScratch(int subjectLength)
    {
        var scratch = t_scratch ??= new byte[1024];
        if (scratch.Length < subjectLength)
        {
            scratch = t_scratch = new byte[subjectLength * 2];
        }
        return scratch;
    }

    /// <summary>
    /// Encodes one PUBLISH into the connection's outbound (false when it was not sent: expired, or too large for an MQTT 5 client); a publisher (<paramref name="origin"/>) that
    /// takes it past the stall threshold waits for it to drain, as for a full NATS client.
    /// </summary>
    /// <remarks>
    /// An MQTT 5 connection gets the message's <paramref name="headers"/> and <paramref name="reply"/> as properties
    /// (MqttV5Headers) and the subscription identifier; a packet over its maximum packet size is not sent [MQTT-3.1.2-24].
    /// </remarks>
    public static bool Send(MqttConnection connection, ClientConnection sessionNats, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ushort pi,
        bool dup, bool retain, MessageOrigin? origin, ReadOnlySpan<byte> headers = default, ReadOnlySpan<byte> reply = default, int subscriptionId = 0)
    {
        // Not the session's own publisher: its read loop would wait on the connection it feeds (NATS clients never stall on themselves either).
        var canStall = origin is not null && origin.Connection != sessionNats;
        var mayDrop = canStall && !origin!.WaitsForSubscribers;
        if (connection.V5 is { } v5)
        {
            // Three more bytes for a topic alias.
            var room = MqttV5Headers.MaxPropertiesSize(headers.Length, reply.Length) + 3;
            var properties = t_properties ??= new byte[1024];
            if (properties.Length < room)
            {
                properties = t_properties = new byte[room * 2];
            }
            if (!MqttV5Headers.EncodeProperties(headers, reply, subscriptionId, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), properties, out var propertiesLength))
            {
                return false;
            }
            if (v5.OutboundAliases is not { } aliases)
            {
                return SendV5(connection, v5, topic, properties.AsSpan(0, propertiesLength), payload, qos, pi, dup, retain, origin, canStall, mayDrop, out _);
            }
            lock (aliases.Sync)
            {
                var alias = aliases.Find(topic, out var known);
                propertiesLength += MqttProperties.WriteUInt16(properties.AsSpan(propertiesLength), MqttProperties.TopicAlias, alias);
                var fits = SendV5(connection, v5, known ? default : topic, properties.AsSpan(0, propertiesLength), payload, qos, pi, dup, retain, origin,
                    canStall, mayDrop, out var queued);
                if (queued && !known)
                {
                    // Only a binding the client received may be relied on: a dropped PUBLISH binds nothing.
                    aliases.Bind(alias, topic);
                }
                return fits;
            }
        }
        var size = MqttPackets.PublishSize(topic.Length, payload.Length, qos);
        if (size <= 512)
        {
            Span<byte> small = stackalloc byte[size];
            MqttPackets.WritePublish(small, topic, payload, qos, pi, dup, retain);
            connection.Outbound.Deliver(small, payload.Length, origin, canStall, mayDrop);
        }
        else
        {
            var packet = System.Buffers.ArrayPool<byte>.Shared.Rent(size);
            MqttPackets.WritePublish(packet.AsSpan(0, size), topic, payload, qos, pi, dup, retain);
            connection.Outbound.Deliver(packet.AsSpan(0, size), payload.Length, origin, canStall, mayDrop);
            System.Buffers.ArrayPool<byte>.Shared.Return(packet);
        }
        return true;
    }

    /// <summary>
    /// One MQTT 5 PUBLISH with its encoded properties; false when it is over the client's maximum packet size.
    /// <paramref name="queued"/>: the queue took it (not closed, dropped or over max_pending).
    /// </summary>
    private static bool SendV5(MqttConnection connection, MqttV5Link v5, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> properties, ReadOnlySpan<byte> payload,
        byte qos, ushort pi, bool dup, bool retain, MessageOrigin? origin, bool canStall, bool mayDrop, out bool queued)
    {
        queued = false;
        var size = MqttV5Packets.PublishSize(topic.Length, properties.Length, payload.Length, qos);
        if (!v5.Fits(size))
        {
            return false;
        }
        var packet = System.Buffers.ArrayPool<byte>.Shared.Rent(size);
        MqttV5Packets.WritePublish(packet, topic, properties, payload, qos, pi, dup, retain);
        queued = connection.Outbound.Deliver(packet.AsSpan(0, size), payload.Length, origin, canStall, mayDrop);
        System.Buffers.ArrayPool<byte>.Shared.Return(packet);
        return true;
    }
}
