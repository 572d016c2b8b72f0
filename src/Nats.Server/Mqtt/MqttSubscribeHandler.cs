using Microsoft.Extensions.Logging;

namespace Nats.Server.Mqtt;

/// <summary>
/// SUBSCRIBE and UNSUBSCRIBE of one MQTT connection (Go's mqttProcessSubs/Unsubs): each filter checked
/// by the permission code a NATS client's SUB goes through, added to the session, stored with it, and
/// answered with its retained messages after the SUBACK. MQTT 5 adds subscription options, identifiers,
/// shared subscriptions (a NATS queue member; at QoS 1/2 also a member of the group's shared consumer) and reason codes.
/// </summary>
internal sealed class MqttSubscribeHandler(MqttConnection connection, MqttServer owner, ILogger logger)
{
    private readonly MqttConnection _connection = connection;
    private readonly MqttServer _owner = owner;
    private readonly ILogger _logger = logger;

    public void HandleSubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: true, out var packetId, _logger, _connection, _connection.V5 is not null);
        var session = _connection.Session!;
        var retained = _owner.Retained(session.Account);
        // See MqttRetainedStore.Gate: no retained publish lands between adding a filter and sending its retained messages.
        lock (retained.Gate)
        {
            SubscribeLocked(session, filters, packetId, retained);
        }
    }

    private void SubscribeLocked(MqttSession session, List<MqttFilterRequest> filters, ushort packetId, MqttRetainedStore retained)
    {
        var v5 = _connection.V5 is not null;
        var granted = new byte[filters.Count];
        var added = new List<(string Subject, byte Qos, int SubscriptionId)>();
        for (var i = 0; i < filters.Count; i++)
        {
            var request = filters[i];
            if (request.Subject is not { } subject)
            {
                granted[i] = v5 ? request.Refusal : MqttPackets.SubAckFailure;
                continue;
            }
            var options = request.Options;
            var shared = options.Group is not null;
            // A shared subscription is a NATS queue subscription (its members share QoS 0 deliveries and NATS
            // publishes) and at QoS 1/2 a member of its group's consumer (MqttSessionFilters.Subscribe).
            var qos = request.Qos;
            var sid = request.Sid(subject);
            if (subject.StartsWith("$MQTT.sub.", StringComparison.Ordinal) || !SubscribeAllowed(subject, options.Group))
            {
                granted[i] = v5 ? MqttReasonCodes.NotAuthorized : MqttPackets.SubAckFailure;
                continue;
            }
            var existed = v5 && session.Filters.Contains(sid);
            if (!session.Filters.Subscribe(subject, sid, qos, options))
            {
                granted[i] = v5 ? MqttReasonCodes.UnspecifiedError : MqttPackets.SubAckFailure;
                continue;
            }
            var sendRetained = !shared && (request.RetainHandling == 0 || (request.RetainHandling == 1 && !existed));
            if (MqttTopics.NeedsLevelUp(subject))
            {
                var parent = subject[..^2];
                if (!session.Filters.Subscribe(parent, request.Sid(parent) + " fwc", qos, options))
                {
                    session.Filters.Unsubscribe(sid);
                    granted[i] = v5 ? MqttReasonCodes.UnspecifiedError : MqttPackets.SubAckFailure;
                    continue;
                }
                if (sendRetained)
                {
                    added.Add((parent, qos, options.SubscriptionId));
                }
            }
            granted[i] = qos;
            if (sendRetained)
            {
                added.Add((subject, qos, options.SubscriptionId));
            }
        }
        // Stored before SUBACK, so a client that got its SUBACK finds the subscription after a restart.
        if (!session.Clean)
        {
            _owner.SaveSession(session);
        }
        if (v5)
        {
            _connection.Outbound.Enqueue(MqttV5Packets.Acks(MqttPackets.SubAck, packetId, granted));
        }
        else
        {
            var packet = new byte[2 + 2 + granted.Length + 4];
            packet[0] = MqttPackets.SubAck;
            var p = 1 + MqttPackets.WriteVarInt(packet.AsSpan(1), 2 + granted.Length);
            packet[p++] = (byte)(packetId >> 8);
            packet[p++] = (byte)packetId;
            granted.CopyTo(packet.AsSpan(p));
            _connection.Outbound.Enqueue(packet.AsSpan(0, p + granted.Length));
        }
        if (retained.Count > 0)
        {
            foreach (var (subject, qos, subscriptionId) in added)
            {
                foreach (var message in retained.Matching(subject))
                {
                    session.Delivery.DeliverRetained(message, qos, subscriptionId);
                }
            }
        }
    }

    public void HandleUnsubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: false, out var packetId, _logger, _connection, _connection.V5 is not null);
        var session = _connection.Session!;
        var codes = new byte[filters.Count];
        for (var i = 0; i < filters.Count; i++)
        {
            if (filters[i].Subject is not { } subject)
            {
                codes[i] = MqttReasonCodes.TopicFilterInvalid;
                continue;
            }
            var sid = filters[i].Sid(subject);
            codes[i] = session.Filters.Contains(sid) ? MqttReasonCodes.Success : MqttReasonCodes.NoSubscriptionExisted;
            session.Filters.Unsubscribe(sid);
            if (MqttTopics.NeedsLevelUp(subject))
            {
                session.Filters.Unsubscribe(filters[i].Sid(subject[..^2]) + " fwc");
            }
        }
        if (_connection.V5 is not null)
        {
            _connection.Outbound.Enqueue(MqttV5Packets.Acks(MqttPackets.UnsubAck, packetId, codes));
        }
        else
        {
            _connection.Outbound.Enqueue([MqttPackets.UnsubAck, 2, (byte)(packetId >> 8), (byte)packetId]);
        }
        if (!session.Clean)
        {
            _owner.SaveSession(session);
        }
    }

    /// <summary>The check a NATS client's SUB (or queue SUB, for a shared subscription) gets (Go's canSubscribe, as mqttProcessSubs uses it).</summary>
    private bool SubscribeAllowed(string subject, string? queue) => _connection.Permissions?.CanSubscribe(subject, queue) ?? true;
}
