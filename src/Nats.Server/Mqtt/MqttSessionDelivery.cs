using System.Text;
using Nats.Server.Delivery;

namespace Nats.Server.Mqtt;

/// <summary>
/// What a session sends its client (Go's mqttDeliverMsgCb*): QoS 0 and NATS messages from a filter's
/// subscription, QoS 1/2 messages from its consumer with a tracked packet id, PUBRELs from the PUBREL
/// consumer, retained messages on SUBSCRIBE; and what the client's acks settle in JetStream.
/// </summary>
internal sealed class MqttSessionDelivery(MqttSession session, MqttInflight inflight)
{
    /// <summary>Delivers a retained message to a new subscription (retain flag set).</summary>
    public void DeliverRetained(MqttRetainedMessage message, byte subscriptionQos, int subscriptionId = 0)
    {
        if (MqttV5Headers.IsExpired(message.Headers))
        {
            return;
        }
        var qos = (byte)Math.Min(subscriptionQos, message.Qos);
        ushort pi = 0;
        if (qos > 0)
        {
            lock (session.Lock)
            {
                pi = inflight.TrackRetained();
            }
            if (pi == 0)
            {
                return;
            }
        }
        if (!Send(message.Topic, message.Payload, qos, pi, dup: false, retain: true, null, message.Headers, default, subscriptionId) && pi != 0)
        {
            PubAck(pi);
        }
    }

    /// <summary>PUBACK: the ack subject that settles the message in JetStream (null when nothing is to be acked).</summary>
    public string? PubAck(ushort pi)
    {
        lock (session.Lock)
        {
            return inflight.UntrackPublish(pi);
        }
    }

    /// <summary>PUBREC: from now on the PUBREL is what is in flight for <paramref name="pi"/> (Go's mqttProcessPubRec).</summary>
    public string? PubRec(ushort pi)
    {
        lock (session.Lock)
        {
            if (session.Filters.PubRelConsumer is { } consumer)
            {
                inflight.TrackPubRel(pi, consumer.Durable!, 0, null);
            }
            return inflight.UntrackPublish(pi);
        }
    }

    /// <summary>PUBCOMP: the ack subject of the stored PUBREL.</summary>
    public string? PubComp(ushort pi)
    {
        lock (session.Lock)
        {
            return inflight.UntrackPubRel(pi);
        }
    }

    /// <summary>Settles a JetStream delivery (an empty message to its ack subject), from the session's client.</summary>
    public void Ack(string ackSubject) => Ack(Encoding.ASCII.GetBytes(ackSubject));

    private void Ack(ReadOnlySpan<byte> ackSubject)
    {
        lock (session.PublishLock)
        {
            session.Publisher.Publish(session.Account, ackSubject, default, default, default);
        }
    }

    /// <summary>
    /// Settles a delivery from inside the consumer's delivery callback: the consumer records the delivery as pending
    /// only once the callback returns, so an ack sent from it would find nothing to settle.
    /// </summary>
    private void AckLater(ReadOnlySpan<byte> ackSubject) =>
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Delivery.Ack(state.Subject), (Delivery: this, Subject: ackSubject.ToArray()), preferLocal: false);

    /// <summary>
    /// Go's mqttDeliverMsgCbQoS0: QoS 0 messages, NATS publishers' messages, and QoS 1/2 ones for a QoS 0
    /// subscription. Messages an MQTT publisher sent with QoS 1/2 reach a QoS 1/2 subscription through its consumer instead.
    /// </summary>
    public bool DeliverPlain(MqttFilterState state, in Message message)
    {
        if (state.Reserved && message.Subject.Length > 0 && message.Subject[0] == (byte)'$')
        {
            return true;
        }
        if (message.Reply.StartsWith("$JS.ACK."u8))
        {
            return true;
        }
        byte messageQos;
        if (!MqttPublishContext.TryGet(out messageQos, out var retain))
        {
            messageQos = MqttHeaders.QosFromHeaders(message.Headers);
            retain = false;
        }
        if (state.Qos > 0 && messageQos > 0)
        {
            if (state.Options.Group is not null && state.Plain is { } member)
            {
                // The queue draw chose this QoS 1/2 member: the group's consumer delivers the stored copy.
                MqttPublishContext.NotePicked(member);
            }
            return true;
        }
        if (session.Connection is not { } connection)
        {
            return true;
        }
        if (connection.V5 is not null)
        {
            if (state.Options.NoLocal && message.Origin?.Connection == session.Nats)
            {
                return true;
            }
            retain &= state.Options.RetainAsPublished;
        }
        if (MqttV5Headers.IsExpired(message.Headers))
        {
            return true;
        }
        // The delivery deny filter a NATS client's wildcard subscription gets when it overlaps a subscribe deny.
        if (connection.Permissions is { } permissions && !permissions.AllowDelivery(message.Subject, message.Reply))
        {
            return true;
        }
        var scratch = MqttPublishWriter.TopicScratch(message.Subject.Length);
        var topicLength = MqttTopics.ToTopic(message.Subject, scratch);
        Send(scratch.AsSpan(0, topicLength), message.Payload, 0, 0, dup: false, retain, message.Origin, message.Headers, message.Reply, state.Options.SubscriptionId);
        return true;
    }

    /// <summary>Go's mqttDeliverMsgCbQoS12: a consumer's delivery of <c>$MQTT.msgs.&lt;subject&gt;</c>, sent with a tracked packet id.</summary>
    public bool DeliverStored(MqttFilterState state, in Message message)
    {
        var subject = message.Subject;
        if (subject.Length <= MqttJetStream.MessagesPrefix.Length || !MqttInflight.TryParseAck(message.Reply, out var sseq, out var delivered))
        {
            return true;
        }
        var qos = Math.Min(MqttHeaders.QosFromHeaders(message.Headers), state.Qos);
        if (qos == 0)
        {
            return true;
        }
        var stripped = subject[MqttJetStream.MessagesPrefix.Length..];
        if ((state.Options.NoLocal && message.Headers.IndexOf(session.SourceLine) >= 0) || MqttV5Headers.IsExpired(message.Headers)
            || (state.TakenLine is { } taken && message.Headers.IndexOf(taken) >= 0))
        {
            // This client's own publish under no local, expired while queued, or a shared group's message that a NATS
            // or QoS 0 member of the group received (MqttLivePublisher): settled without being sent.
            AckLater(message.Reply);
            return true;
        }
        ushort pi;
        lock (session.Lock)
        {
            if (session.Connection is null || state.Consumer is not { } consumer)
            {
                return false;
            }
            if (state.Reserved && stripped[0] == (byte)'$')
            {
                pi = 0;
            }
            else
            {
                pi = inflight.TrackPublish(consumer.Durable!, sseq, Encoding.ASCII.GetString(message.Reply));
                if (pi == 0)
                {
                    // At max_ack_pending: JetStream redelivers after ack_wait.
                    return true;
                }
            }
        }
        if (pi == 0)
        {
            AckLater(message.Reply);
            return true;
        }
        var scratch = MqttPublishWriter.TopicScratch(stripped.Length);
        var topicLength = MqttTopics.ToTopic(stripped, scratch);
        if (!Send(scratch.AsSpan(0, topicLength), message.Payload, (byte)qos, pi, dup: delivered > 1, retain: false, message.Origin, message.Headers, default,
            state.Options.SubscriptionId) && PubAck(pi) is { } ack)
        {
            // Too large for an MQTT 5 client: discarded as if delivered [MQTT-3.1.2-25].
            AckLater(System.Text.Encoding.ASCII.GetBytes(ack));
        }
        return true;
    }

    /// <summary>Go's mqttDeliverPubRelCb: a stored PUBREL comes back (again) for its client.</summary>
    public bool DeliverPubRel(in Message message)
    {
        var pi = MqttHeaders.PubRelId(message.Headers);
        if (pi == 0 || !MqttInflight.TryParseAck(message.Reply, out var sseq, out _))
        {
            return true;
        }
        MqttConnection? connection;
        lock (session.Lock)
        {
            connection = session.Connection;
            if (connection is null || session.Filters.PubRelConsumer is not { } consumer)
            {
                return false;
            }
            inflight.TrackPubRel(pi, consumer.Durable!, sseq, Encoding.ASCII.GetString(message.Reply));
        }
        connection.Outbound.Enqueue([MqttPackets.PubRel | 0x02, 2, (byte)(pi >> 8), (byte)pi]);
        return true;
    }


    /// <summary>Encodes one PUBLISH for the bound connection (if any); see <see cref="MqttPublishWriter"/>.</summary>
    private bool Send(ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ushort pi, bool dup, bool retain, MessageOrigin? origin,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> reply, int subscriptionId) =>
        session.Connection is not { } connection || MqttPublishWriter.Send(connection, session.Nats, topic, payload, qos, pi, dup, retain, origin, headers, reply, subscriptionId);
}
