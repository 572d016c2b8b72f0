using Nats.Server.Clients;
using Nats.Server.Delivery;

namespace Nats.Server.Mqtt;

/// <summary>
/// Encodes a PUBLISH for a subscriber's connection into its <see cref="MqttOutbound"/> (on the
/// publisher's thread, no allocation up to 512 bytes), and stalls the publisher on it when full.
/// </summary>
internal static class MqttPublishWriter
{
    [ThreadStatic]
    private static byte[]? t_scratch;

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
    /// Encodes one PUBLISH into the connection's outbound; a publisher (<paramref name="origin"/>) that
    /// takes it past the stall threshold waits for it to drain, as for a full NATS client.
    /// </summary>
    public static void Send(MqttConnection connection, ClientConnection sessionNats, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ushort pi, bool dup, bool retain, MessageOrigin? origin)
    {
        // Not the session's own publisher: its read loop would wait on the connection it feeds (NATS clients never stall on themselves either).
        var canStall = origin is not null && origin.Connection != sessionNats;
        var mayDrop = canStall && !origin!.WaitsForSubscribers;
        bool stall;
        var size = MqttPackets.PublishSize(topic.Length, payload.Length, qos);
        if (size <= 512)
        {
            Span<byte> small = stackalloc byte[size];
            MqttPackets.WritePublish(small, topic, payload, qos, pi, dup, retain);
            stall = connection.Outbound.Enqueue(small, canStall, mayDrop);
        }
        else
        {
            var packet = System.Buffers.ArrayPool<byte>.Shared.Rent(size);
            MqttPackets.WritePublish(packet.AsSpan(0, size), topic, payload, qos, pi, dup, retain);
            stall = connection.Outbound.Enqueue(packet.AsSpan(0, size), canStall, mayDrop);
            System.Buffers.ArrayPool<byte>.Shared.Return(packet);
        }
        connection.CountOut(payload.Length);
        if (stall)
        {
            origin!.StallOn(connection.Outbound);
        }
    }
}
