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
    private readonly MqttLivePublisher _live = new(owner.JetStream);
    private byte[] _subjectScratch = new byte[256];
    private byte[] _linesScratch = [];
    private byte[] _sourceScratch = [];

    public void HandlePublish(byte flags, ReadOnlySpan<byte> body)
    {
        var v5 = _connection.V5;
        var publish = MqttDecoder.ParsePublish(flags, body, ref _subjectScratch, v5?.Aliases);
        var subject = publish.Subject;
        var topic = publish.Topic;
        var payload = publish.Payload;
        var (qos, retain, packetId) = (publish.Qos, publish.Retain, publish.PacketId);
        ReadOnlySpan<byte> lines = default;
        if (v5 is not null)
        {
            if (qos > 0)
            {
                v5.Received(qos, packetId);
            }
            if (publish.Properties.Travels)
            {
                var size = MqttV5Headers.MaxLinesSize(publish.Properties);
                if (_linesScratch.Length < size)
                {
                    _linesScratch = new byte[size * 2];
                }
                lines = _linesScratch.AsSpan(0, MqttV5Headers.AppendLines(publish.Properties, _linesScratch, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()));
            }
        }
        if (qos > 0 && _connection.Session!.Filters.HasNoLocal)
        {
            lines = WithSource(lines, _connection.Session.SourceLine);
        }
        if (qos == 2)
        {
            // Go 2.10: held in $MQTT_qos2in until PUBREL, once per packet id, so a resent PUBLISH is delivered once.
            // PUBREC once $MQTT_qos2in's PubAck says the message is durable (MqttStoreAcks).
            StoreQos2(packetId, subject, payload, retain, lines);
            return;
        }
        Publish(_connection.Session!, subject, topic, payload, qos, retain, lines, packetId);
    }

    private string Qos2Subject(ushort packetId) =>
        MqttJetStream.Qos2InPrefix + _connection.ClientId + "." + packetId.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Go's mqttStoreQoS2MsgOnce: the message with Nmqtt-Pub:2 and Nmqtt-Subject headers (and retain in ours), once per packet id.</summary>
    private void StoreQos2(ushort packetId, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload, bool retain, ReadOnlySpan<byte> lines)
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
        var headers = $"NATS/1.0\r\nNmqtt-Pub:2\r\nNmqtt-Subject:{Encoding.UTF8.GetString(subject)}\r\n{(retain ? "Nmqtt-Retain:1\r\n" : "")}{Encoding.UTF8.GetString(lines)}\r\n";
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
                Publish(session, subjectBytes, topic.AsSpan(0, topicLength), stored.Data.Span, 2, retain, MqttHeaders.LinesAfterQos2(headers));
            }
        }
        _connection.Outbound.Enqueue([MqttPackets.PubComp, 2, (byte)(packetId >> 8), (byte)packetId]);
        _connection.V5?.PubCompSent(packetId);
    }

    /// <summary>Go's mqttProcessPubRec: the PUBREL is stored in $MQTT_out (delivered, and redelivered, by the PUBREL consumer), then the PUBLISH is acked.</summary>
    public void HandlePubRec(ushort packetId)
    {
        var session = _connection.Session!;
        var acked = session.Delivery.PubRec(packetId);
        var headers = Encoding.ASCII.GetBytes($"NATS/1.0\r\nNmqtt-PubRel:{packetId}\r\n\r\n");
        _owner.JetStream.Store(session.Account, session.Filters.PubRelSubject, headers, default);
        if (acked is not null)
        {
            session.Delivery.Ack(acked);
        }
    }

    /// <summary>Publishes into the account and, for QoS 1/2, stores a copy in $MQTT_msgs; with a <paramref name="pubAckId"/>
    /// the PUBACK follows the store's PubAck (MqttStoreAcks), so an acknowledged message is durable.</summary>
    /// <remarks><paramref name="lines"/>: an MQTT 5 publish's properties as header lines (MqttV5Headers), empty for 3.1.1.</remarks>
    private void Publish(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, bool retain,
        ReadOnlySpan<byte> lines, ushort pubAckId = 0)
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
                _owner.SetRetained(session.Account, Encoding.UTF8.GetString(subjectBytes), topic, payload, qos, lines);
                PublishLive(session, subjectBytes, payload, qos, retain, lines, pubAckId);
            }
            return;
        }
        PublishLive(session, subjectBytes, payload, qos, retain, lines, pubAckId);
    }

    /// <summary>The NATS fan-out and, for QoS 1/2, the copy in $MQTT_msgs (matched now, flushed per read buffer).</summary>
    private void PublishLive(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> payload, byte qos, bool retain,
        ReadOnlySpan<byte> lines, ushort pubAckId)
    {
        var storeReply = pubAckId > 0 ? _connection.StoreAcks!.Expect(MqttPackets.PubAck, pubAckId) : default;
        if (!_live.Publish(session, subjectBytes, payload, qos, retain, lines, storeReply) && pubAckId > 0)
        {
            _connection.StoreAcks!.NotStored(storeReply);
        }
    }

    /// <summary>The publish's header lines plus the session's source line (no local for QoS 1/2: MqttSessionFilters.HasNoLocal).</summary>
    private ReadOnlySpan<byte> WithSource(ReadOnlySpan<byte> lines, ReadOnlySpan<byte> source)
    {
        var size = lines.Length + source.Length;
        if (_sourceScratch.Length < size)
        {
            _sourceScratch = new byte[size * 2];
        }
        lines.CopyTo(_sourceScratch);
        source.CopyTo(_sourceScratch.AsSpan(lines.Length));
        return _sourceScratch.AsSpan(0, size);
    }

    public void PublishWill(MqttSession session, MqttWill will)
    {
        try
        {
            Publish(session, Encoding.UTF8.GetBytes(will.Subject), will.Topic, will.Message, will.Qos, will.Retain, will.Lines);
        }
        catch (Exception e)
        {
            _logger.LogError("{Connection} - unable to publish will: {Error}", _connection, e.Message);
        }
    }

    /// <summary>Whether the client may publish to <paramref name="subject"/> (a publish violation is logged as for a PUBLISH).</summary>
    public bool MayPublish(string subject)
    {
        if (_connection.Permissions is { } permissions && !CanPublish(permissions, Encoding.UTF8.GetBytes(subject)))
        {
            _logger.LogError("{Connection} - Publish Violation - User {User}, Subject {Subject}", _connection, _connection.User, subject);
            return false;
        }
        return true;
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
