using System.Text;
using Nats.Server.Clients;

namespace Nats.Server.Subscriptions;

/// <summary>
/// One SUB of one client. Subject, queue and sid are kept as bytes because they are copied into
/// every MSG line delivered for this subscription.
/// </summary>
internal sealed class Subscription
{
    /// <summary>
    /// A subscription owned by <paramref name="client"/>. Without a receiver its matches are queued to
    /// the client as MSG lines (the fast path); with one (the server's own handlers) they go to the
    /// receiver and the client only owns it (sid, monitoring, removal).
    /// </summary>
    public Subscription(ClientConnection client, byte[] subject, byte[]? queue, byte[] sid, Delivery.IMessageReceiver? receiver = null)
    {
        Client = client;
        Subject = subject;
        Queue = queue;
        Sid = sid;
        Receiver = receiver;
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

    /// <summary>
    /// Interest a peer server announced over a route (RS+): matches are not delivered one by one but
    /// collected per route by the router and sent as one RMSG per route (with the queue names chosen).
    /// </summary>
    public Subscription(Routes.RouteConnection remote, byte[] subject, byte[]? queue, byte[] sid, int weight)
    {
        Client = null!;
        Remote = remote;
        Subject = subject;
        Queue = queue;
        Sid = sid;
        Weight = weight;
    }

    /// <summary>The route whose peer holds this interest; null for every local subscription.</summary>
    public Routes.RouteConnection? Remote { get; }

    /// <summary>A remote queue subscription stands for this many members of its group (RS+ weight).</summary>
    public volatile int Weight = 1;

    /// <summary>
    /// Set on a subsystem's or the server's own subscription: delivery hands it the message instead of
    /// queueing a MSG. A field read on an object the fan-out loop holds anyway, so ordinary client
    /// deliveries pay one predictable branch.
    /// </summary>
    public Delivery.IMessageReceiver? Receiver { get; }

    /// <summary>The subscribing connection; null for internal subscriptions (<see cref="Route"/> or <see cref="Receiver"/> set).</summary>
    public ClientConnection Client { get; }

    public Accounts.InternalRoute? Route { get; }
    public byte[] Subject { get; }
    public byte[]? Queue { get; }
    public byte[] Sid { get; }

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
