using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.JetStream.Consumers;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Mqtt;

/// <summary>One MQTT filter: its NATS subscription, and for QoS 1/2 its consumer and deliver-subject subscription.</summary>
internal sealed class MqttFilterState
{
    public MqttFilterState(MqttSession session, string sid, byte qos, string? subject = null)
    {
        Sid = sid;
        Qos = qos;
        Subject = subject ?? (sid.EndsWith(" fwc", StringComparison.Ordinal) ? sid[..^4] : sid);
        if (subject is null && MqttSharedFilter.TryParse(Subject, out var group, out var shared))
        {
            // A restored shared subscription: its group is in its sid ("$share/<group>/<subject>").
            Subject = shared;
            Options = new MqttFilterOptions(false, false, 0, group);
        }
        Reserved = SubjectTokens.IsWildcard(Subject) || Subject.StartsWith("*.", StringComparison.Ordinal);
        PlainReceiver = new MqttFilterReceiver(session, this, stored: false);
        DeliveryReceiver = new MqttFilterReceiver(session, this, stored: true);
    }

    public string Sid { get; }

    /// <summary>The subject: the sid, or for a "foo fwc" sid the parent "foo" of "foo.>".</summary>
    public string Subject { get; }

    /// <summary>Go's isMQTTReservedSubscription: "#", "+" and "+/..." never match "$" topics [MQTT-4.7.2-1].</summary>
    public bool Reserved { get; }

    public byte Qos;

    /// <summary>MQTT 5 subscription options (3.8.3.1) and identifier; a shared subscription's group is its NATS queue.</summary>
    public MqttFilterOptions Options;

    /// <summary>A shared filter's line in a stored message whose group a NATS or QoS 0 member served (see <see cref="MqttLivePublisher"/>).</summary>
    public byte[]? TakenLine => Options.Group is { } group ? _takenLine ??= MqttLivePublisher.TakenLine(group, Subject) : null;

    private byte[]? _takenLine;

    public Subscription? Plain;
    public ConsumerConfig? Consumer;
    public Subscription? Delivery;
    public MessageReceiver PlainReceiver { get; }
    public MessageReceiver DeliveryReceiver { get; }
}

/// <summary>A filter's receiver: its plain subscription's messages (QoS 0) or its consumer's deliveries (QoS 1/2).</summary>
internal sealed class MqttFilterReceiver(MqttSession session, MqttFilterState state, bool stored) : MessageReceiver
{
    public override ClientConnection? Connection => session.Nats;

    public override bool Deliver(Subscription subscription, in Message message) =>
        stored ? session.Delivery.DeliverStored(state, message) : session.Delivery.DeliverPlain(state, message);
}

/// <summary>The receiver of a session's PUBREL consumer (<c>$MQTT_out</c>).</summary>
internal sealed class MqttPubRelReceiver(MqttSession session) : MessageReceiver
{
    public override ClientConnection? Connection => session.Nats;

    public override bool Deliver(Subscription subscription, in Message message) => session.Delivery.DeliverPubRel(message);
}

/// <summary>An MQTT 5 subscription's options: none of them for 3.1.1.</summary>
internal readonly record struct MqttFilterOptions(bool NoLocal, bool RetainAsPublished, int SubscriptionId, string? Group);
