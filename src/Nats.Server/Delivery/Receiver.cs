using Nats.Server.Subscriptions;

namespace Nats.Server.Delivery;

/// <summary>The kinds of <see cref="Receiver"/>; the router branches on it instead of dispatching virtually.</summary>
internal enum ReceiverKind : byte
{
    /// <summary>A client connection: takes the prebuilt MSG line (<see cref="Clients.ClientConnection"/>, the fast path).</summary>
    Client,

    /// <summary>A server subsystem handed a <see cref="Message"/> (<see cref="MessageReceiver"/>).</summary>
    Message,

    /// <summary>An import or response route that re-enters routing in another account (<see cref="Accounts.InternalRoute"/>).</summary>
    Import,

    /// <summary>A peer server's interest: collected per peer and sent as RMSG/LMSG (<see cref="RemotePeer"/>: a route or a leaf connection).</summary>
    Remote,
}

/// <summary>
/// The owner of a subscription and where its matches go: every <see cref="Subscription"/> has exactly
/// one. A client, a server handler, a JetStream stream or consumer, an MQTT session, an import and a
/// route's remote interest are all receivers. The kind is fixed at construction and copied into the
/// subscription, so the fan-out takes the client path with one compare and a non-virtual call; only
/// subsystem receivers are called through <see cref="MessageReceiver.Deliver"/>.
/// </summary>
internal abstract class Receiver
{
    private protected Receiver(ReceiverKind kind) => Kind = kind;

    public ReceiverKind Kind { get; }
}
