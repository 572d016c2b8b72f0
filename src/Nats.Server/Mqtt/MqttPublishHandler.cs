using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Auth;

namespace Nats.Server.Mqtt;

/// <summary>
/// The inbound PUBLISH side of one MQTT connection (Go's mqttProcessPub and its QoS 2 half): the
/// permission check, the NATS fan-out through the session's internal client, the copy of a QoS 1/2
/// message in <c>$MQTT_msgs</c> whose store acknowledgement releases the PUBACK, and the
/// PUBREC/PUBREL exchange through <c>$MQTT_qos2in</c> and <c>$MQTT_out</c>.
/// </summary>
internal sealed class MqttPublishHandler(MqttConnection connection, MqttServer owner, ILogger logger)
{
    private readonly MqttConnection _connection = connection;
    private readonly MqttServer _owner = owner;
    private readonly ILogger _logger = logger;
    private byte[] _subjectScratch = new byte[256];
    private byte[] _storeScratch = new byte[256];

    public void HandlePublish(byte flags, ReadOnlySpan<byte> body)
    {
        var publish = MqttDecoder.ParsePublish(flags, body, ref _subjectScratch);
        var subject = publish.Subject;
        var topic = publish.Topic;
        var payload = publish.Payload;
        var (qos, retain, packetId) = (publish.Qos, publish.Retain, publish.PacketId);
        if (qos == 2)
        {
            // Go 2.10: held in $MQTT_qos2in until PUBREL, once per packet id, so a resent PUBLISH is delivered once.
            // PUBREC once $MQTT_qos2in's PubAck says the message is durable (MqttStoreAcks).
            StoreQos2(packetId, subject, payload, retain);
            return;
        }
        Publish(_connection.Session!, subject, topic, payload, qos, retain, packetId);
    }

    private string Qos2Subject(ushort packetId) =>
        MqttJetStream.Qos2InPrefix + _connection.ClientId + "." + packetId.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Go's mqttStoreQoS2MsgOnce: the message with Nmqtt-Pub:2 and Nmqtt-Subject headers (and retain in ours), once per packet id.</summary>
    private void StoreQos2(ushort packetId, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload, bool retain)
    {
        var js = _owner.JetStream;
        var session = _connection.Session!;
        var storeSubject = Qos2Subject(packetId);
        var acks = _connection.StoreAcks!;
        if (js.LoadLast(session.Account, MqttJetStream.Qos2InStream, storeSubject) is not null)
        {
            // A resent PUBLISH of a packet id already held: answered again, in order, with nothing stored, but
            // not before the held copy is durable (the first PUBLISH may have come on a connection that closed
            // while its sync round was running).
            acks.AfterDurable(MqttPackets.PubRec, packetId, js.WhenDurable(session.Account, MqttJetStream.Qos2InStream));
            return;
        }
        var headers = $"NATS/1.0\r\nNmqtt-Pub:2\r\nNmqtt-Subject:{Encoding.UTF8.GetString(subject)}\r\n{(retain ? "Nmqtt-Retain:1\r\n" : "")}\r\n";
        var reply = acks.Expect(MqttPackets.PubRec, packetId);
        if (!js.Store(session.Account, storeSubject, Encoding.UTF8.GetBytes(headers), payload, reply))
        {
            acks.NotStored(reply);
        }
    }

    /// <summary>Go's mqttProcessPubRel: the held message is removed from $MQTT_qos2in and published; PUBCOMP either way.</summary>
    public void HandlePubRel(ReadOnlySpan<byte> body)
    {
        var packetId = new MqttReader(body).ReadUInt16("packet identifier");
        var session = _connection.Session!;
        var js = _owner.JetStream;
        if (js.LoadLast(session.Account, MqttJetStream.Qos2InStream, Qos2Subject(packetId)) is { } stored)
        {
            js.Delete(session.Account, MqttJetStream.Qos2InStream, stored.Sequence);
            var headers = stored.Header.Span;
            if (Nats.Server.JetStream.NatsHeaders.Get(headers, "Nmqtt-Subject") is { Length: > 0 } subject)
            {
                var subjectBytes = Encoding.UTF8.GetBytes(subject);
                var topic = new byte[subjectBytes.Length * 2 + 1];
                var topicLength = MqttTopics.ToTopic(subjectBytes, topic);
                var retain = Nats.Server.JetStream.NatsHeaders.Get(headers, "Nmqtt-Retain") == "1";
                Publish(session, subjectBytes, topic.AsSpan(0, topicLength), stored.Data.Span, 2, retain);
            }
        }
        _connection.Outbound.Enqueue([MqttPackets.PubComp, 2, (byte)(packetId >> 8), (byte)packetId]);
    }

    /// <summary>Go's mqttProcessPubRec: the PUBREL is stored in $MQTT_out (delivered, and redelivered, by the PUBREL consumer), then the PUBLISH is acked.</summary>
    public void HandlePubRec(ushort packetId)
    {
        var session = _connection.Session!;
        var acked = session.PubRec(packetId);
        var headers = Encoding.ASCII.GetBytes($"NATS/1.0\r\nNmqtt-PubRel:{packetId}\r\n\r\n");
        _owner.JetStream.Store(session.Account, session.PubRelSubject, headers, default);
        if (acked is not null)
        {
            session.Ack(acked);
        }
    }

    /// <summary>Publishes into the account (no allocation for QoS 0/1 without retain).</summary>
    /// <summary>Publishes into the account and, for QoS 1/2, stores a copy in $MQTT_msgs; with a <paramref name="pubAckId"/>
    /// the PUBACK follows the store's PubAck (MqttStoreAcks), so an acknowledged message is durable.</summary>
    private void Publish(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, bool retain,
        ushort pubAckId = 0)
    {
        Interlocked.Increment(ref _connection.InMsgs);
        Interlocked.Add(ref _connection.InBytes, payload.Length);
        if (_connection.Permissions is { } permissions && !CanPublish(permissions, subjectBytes))
        {
            _logger.LogError("{Connection} - Publish Violation - User {User}, Subject {Subject}", _connection, _connection.User, Encoding.UTF8.GetString(subjectBytes));
            if (pubAckId > 0)
            {
                // Go still acknowledges a publish its permissions dropped.
                _connection.StoreAcks!.Immediate(MqttPackets.PubAck, pubAckId);
            }
            return;
        }
        if (retain)
        {
            var gate = _owner.Retained(session.Account).Gate;
            lock (gate)
            {
                _owner.SetRetained(session.Account, Encoding.UTF8.GetString(subjectBytes), topic, payload, qos);
                PublishLive(session, subjectBytes, payload, qos, retain, pubAckId);
            }
            return;
        }
        PublishLive(session, subjectBytes, payload, qos, retain, pubAckId);
    }

    /// <summary>The NATS fan-out and, for QoS 1/2, the copy in $MQTT_msgs (matched now, flushed per read buffer).</summary>
    private void PublishLive(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> payload, byte qos, bool retain, ushort pubAckId)
    {
        ReadOnlySpan<byte> headers = qos switch
        {
            0 => "NATS/1.0\r\nNmqtt-Pub:0\r\n\r\n"u8,
            1 => "NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n"u8,
            _ => "NATS/1.0\r\nNmqtt-Pub:2\r\n\r\n"u8,
        };
        lock (session.Nats)
        {
            using (MqttPublishContext.Enter(qos, retain))
            {
                // Flushed once per read buffer (FlushPublished), not once per message.
                session.Publisher.PublishDeferred(session.Account, subjectBytes, default, headers, payload);
            }
            if (qos > 0)
            {
                // Go's mqttInitiateMsgDelivery: QoS 1/2 also go to $MQTT_msgs for the subscriptions' consumers.
                var stored = MqttJetStream.MessagesPrefix.Length + subjectBytes.Length;
                if (_storeScratch.Length < stored)
                {
                    _storeScratch = new byte[stored * 2];
                }
                "$MQTT.msgs."u8.CopyTo(_storeScratch);
                subjectBytes.CopyTo(_storeScratch.AsSpan(MqttJetStream.MessagesPrefix.Length));
                var reply = pubAckId > 0 ? _connection.StoreAcks!.Expect(MqttPackets.PubAck, pubAckId) : default;
                if (!session.Publisher.PublishDeferred(session.Account, _storeScratch.AsSpan(0, stored), reply, headers, payload) && pubAckId > 0)
                {
                    _connection.StoreAcks!.NotStored(reply);
                }
            }
        }
    }

    public void PublishWill(MqttSession session, MqttWill will)
    {
        try
        {
            Publish(session, Encoding.UTF8.GetBytes(will.Subject), will.Topic, will.Message, will.Qos, will.Retain);
        }
        catch (Exception e)
        {
            _logger.LogError("{Connection} - unable to publish will: {Error}", _connection, e.Message);
        }
    }

    /// <summary>Go's pubAllowed; the lock because a will is published from whichever thread closes the connection.</summary>
    private static bool CanPublish(ClientPermissions permissions, ReadOnlySpan<byte> subject)
    {
        lock (permissions)
        {
            return permissions.CanPublish(subject);
        }
    }
}
