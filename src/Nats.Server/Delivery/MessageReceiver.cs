using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Subscriptions;

namespace Nats.Server.Delivery;

/// <summary>
/// A subsystem receiver: the server's <c>$SYS</c> handlers (<see cref="HandlerReceiver"/>), JetStream's
/// stream ingest, API and ack subscriptions (<c>JetStreamTransport</c>) and an MQTT session's
/// subscriptions (<c>MqttSession</c>). The router hands every one the same <see cref="Message"/> and
/// each encodes it its own way (a stored record, an MQTT PUBLISH, a handler call...).
/// </summary>
/// <remarks>
/// How a subsystem attaches: derive from this class and insert a
/// <c>new Subscription(receiver, subject, queue, sid)</c> into the account's
/// <see cref="SubList"/>; every PUB, internal publish and import that matches it calls
/// <see cref="Deliver"/>. Deliver runs on the publisher's thread (a client read loop or the server's
/// internal publisher), inside the fan-out: copy what you keep (the spans die when it returns), never
/// block, and return quickly — queue the work for your own loop if it is slow. A receiver that wants
/// back-pressure returns false (the message is dropped for it) rather than waiting.
/// </remarks>
internal abstract class MessageReceiver : Receiver
{
    protected MessageReceiver()
        : base(ReceiverKind.Message)
    {
    }

    /// <summary>The internal connection that holds this receiver's subscriptions by sid (they go when it
    /// closes, and monitoring shows them there); null when the subsystem tracks them itself.</summary>
    public virtual ClientConnection? Connection => null;

    /// <summary>
    /// Delivers one message for <paramref name="subscription"/>. Returns false when nothing was
    /// delivered (refused, closed, dropped), which lets a queue group try its next member and a
    /// request get its no-responders status.
    /// </summary>
    public abstract bool Deliver(Subscription subscription, in Message message);
}

/// <summary>
/// One message as the router sees it. Every span points into the publisher's buffer and is valid only
/// during <see cref="MessageReceiver.Deliver"/>.
/// </summary>
internal readonly ref struct Message
{
    public Message(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload,
        Account account, MessageOrigin origin)
    {
        Subject = subject;
        Reply = reply;
        Headers = headers;
        Payload = payload;
        Account = account;
        Origin = origin;
    }

    /// <summary>The subject as the receiver's account sees it (after mappings and import renaming).</summary>
    public ReadOnlySpan<byte> Subject { get; }

    public ReadOnlySpan<byte> Reply { get; }

    /// <summary>The NATS/1.0 header block including its closing blank line; empty when the message has none.</summary>
    public ReadOnlySpan<byte> Headers { get; }

    /// <summary>The body, without the protocol's trailing CRLF.</summary>
    public ReadOnlySpan<byte> Payload { get; }

    /// <summary>The account whose subscription matched: where the message is delivered (an import moves it from the publisher's).</summary>
    public Account Account { get; }

    /// <summary>Who published: a client (<see cref="MessageOrigin.Connection"/>) or one of the server's own loops.</summary>
    public MessageOrigin Origin { get; }

    public bool HasHeaders => !Headers.IsEmpty;
}
