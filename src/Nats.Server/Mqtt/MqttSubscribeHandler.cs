using Microsoft.Extensions.Logging;

namespace Nats.Server.Mqtt;

/// <summary>
/// SUBSCRIBE and UNSUBSCRIBE of one MQTT connection (Go's mqttProcessSubs/Unsubs): each filter checked
/// by the permission code a NATS client's SUB goes through, added to the session, stored with it, and
/// answered with its retained messages after the SUBACK.
/// </summary>
internal sealed class MqttSubscribeHandler(MqttConnection connection, MqttServer owner, ILogger logger)
{
    private readonly MqttConnection _connection = connection;
    private readonly MqttServer _owner = owner;
    private readonly ILogger _logger = logger;

    public void HandleSubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: true, out var packetId, _logger, _connection);
        var session = _connection.Session!;
        var retained = _owner.Retained(session.Account);
        // See MqttRetainedStore.Gate: no retained publish lands between adding a filter and sending its retained messages.
        lock (retained.Gate)
        {
            SubscribeLocked(session, filters, packetId, retained);
        }
    }

    private void SubscribeLocked(MqttSession session, List<(string? Subject, byte Qos)> filters, ushort packetId, MqttRetainedStore retained)
    {
        var granted = new byte[filters.Count];
        var added = new List<(string Subject, byte Qos)>();
        for (var i = 0; i < filters.Count; i++)
        {
            var (subject, qos) = filters[i];
            if (subject is null || subject.StartsWith("$MQTT.sub.", StringComparison.Ordinal) || !SubscribeAllowed(subject)
                || !session.Subscribe(subject, subject, qos))
            {
                granted[i] = MqttPackets.SubAckFailure;
                continue;
            }
            if (MqttTopics.NeedsLevelUp(subject))
            {
                var parent = subject[..^2];
                if (!session.Subscribe(parent, parent + " fwc", qos))
                {
                    session.Unsubscribe(subject);
                    granted[i] = MqttPackets.SubAckFailure;
                    continue;
                }
                added.Add((parent, qos));
            }
            granted[i] = qos;
            added.Add((subject, qos));
        }
        var packet = new byte[2 + 2 + granted.Length + 4];
        packet[0] = MqttPackets.SubAck;
        var p = 1 + MqttPackets.WriteVarInt(packet.AsSpan(1), 2 + granted.Length);
        packet[p++] = (byte)(packetId >> 8);
        packet[p++] = (byte)packetId;
        granted.CopyTo(packet.AsSpan(p));
        // Stored before SUBACK, so a client that got its SUBACK finds the subscription after a restart.
        if (!session.Clean)
        {
            _owner.SaveSession(session);
        }
        _connection.Outbound.Enqueue(packet.AsSpan(0, p + granted.Length));
        if (retained.Count > 0)
        {
            foreach (var (subject, qos) in added)
            {
                foreach (var message in retained.Matching(subject))
                {
                    session.DeliverRetained(message, qos);
                }
            }
        }
    }

    public void HandleUnsubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: false, out var packetId, _logger, _connection);
        foreach (var (subject, _) in filters)
        {
            if (subject is null)
            {
                continue;
            }
            _connection.Session!.Unsubscribe(subject);
            if (MqttTopics.NeedsLevelUp(subject))
            {
                _connection.Session!.Unsubscribe(subject[..^2] + " fwc");
            }
        }
        _connection.Outbound.Enqueue([MqttPackets.UnsubAck, 2, (byte)(packetId >> 8), (byte)packetId]);
        if (!_connection.Session!.Clean)
        {
            _owner.SaveSession(_connection.Session);
        }
    }

    /// <summary>The check a NATS client's SUB gets (Go's canSubscribe, as mqttProcessSubs uses it).</summary>
    private bool SubscribeAllowed(string subject) => _connection.Permissions?.CanSubscribe(subject, null) ?? true;
}
