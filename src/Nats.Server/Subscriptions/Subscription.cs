using System.Text;
using Nats.Server.Accounts.System;
using Nats.Server.Clients;

namespace Nats.Server.Subscriptions;

/// <summary>
/// One SUB of one client. Subject, queue and sid are kept as bytes because they are copied into
/// every MSG line delivered for this subscription.
/// </summary>
internal sealed class Subscription
{
    public Subscription(ClientConnection client, byte[] subject, byte[]? queue, byte[] sid, InternalMessageHandler? handler = null)
    {
        Client = client;
        Subject = subject;
        Queue = queue;
        Sid = sid;
        Handler = handler;
    }

    /// <summary>
    /// An account-level subscription (import or response routing) owned by no client: the delivery
    /// path hands such matches to <see cref="Route"/> instead of a connection.
    /// </summary>
    public Subscription(Accounts.InternalRoute route, byte[] subject, byte[] sid)
    {
        Client = null!;
        Route = route;
        Subject = subject;
        Sid = sid;
    }

    /// <summary>
    /// A subscription of a server subsystem (JetStream, MQTT, a route...): matches are handed to
    /// <paramref name="receiver"/>, which encodes them its own way (see <see cref="Delivery.IMessageReceiver"/>).
    /// </summary>
    public Subscription(Delivery.IMessageReceiver receiver, byte[] subject, byte[]? queue, byte[] sid)
    {
        Client = null!;
        Receiver = receiver;
        Subject = subject;
        Queue = queue;
        Sid = sid;
    }

    /// <summary>Set on a subsystem's subscription; client subscriptions leave it null and take the MSG fast path.</summary>
    public Delivery.IMessageReceiver? Receiver { get; }

    /// <summary>The subscribing connection; null for internal subscriptions (<see cref="Route"/> or <see cref="Receiver"/> set).</summary>
    public ClientConnection Client { get; }

    public Accounts.InternalRoute? Route { get; }
    public byte[] Subject { get; }
    public byte[]? Queue { get; }
    public byte[] Sid { get; }

    /// <summary>
    /// Set only on the server's own subscriptions (the system account's request handlers): delivery
    /// calls it instead of queueing a MSG. A field read on an object the fan-out loop holds anyway,
    /// so ordinary deliveries pay one predictable branch.
    /// </summary>
    public InternalMessageHandler? Handler { get; }

    /// <summary>Messages delivered so far; only counted when an auto-unsubscribe limit is set.</summary>
    public long Delivered;

    /// <summary>Auto-unsubscribe limit (UNSUB sid max); 0 means none.</summary>
    public long Max;

    /// <summary>Set once the subscription left the index; deliveries racing with removal check it.</summary>
    public volatile bool Closed;

    public string SubjectString => Encoding.UTF8.GetString(Subject);
    public string? QueueString => Queue is null ? null : Encoding.UTF8.GetString(Queue);
    public string SidString => Encoding.UTF8.GetString(Sid);

    public override string ToString() => Queue is null ? $"{SubjectString} {SidString}" : $"{SubjectString} {QueueString} {SidString}";
}
