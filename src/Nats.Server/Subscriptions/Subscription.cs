using System.Runtime.CompilerServices;
using System.Text;
using Nats.Server.Clients;
using Nats.Server.Delivery;

namespace Nats.Server.Subscriptions;

/// <summary>
/// One subscription in an account's index, of whatever origin: a client's SUB, a server handler, a
/// JetStream or MQTT subscription, an import, a peer's interest over a route. Its
/// <see cref="Receiver"/> owns it and takes its matches. Subject, queue and sid are kept as bytes
/// because they are copied into every MSG line delivered for this subscription.
/// </summary>
internal sealed class Subscription
{
    /// <param name="weight">For a peer's queue interest: how many members of its group it stands for (RS+ weight).</param>
    public Subscription(Receiver receiver, byte[] subject, byte[]? queue, byte[] sid, int weight = 1)
    {
        Receiver = receiver;
        // Null only in index-only tests and benchmarks, which never deliver.
        Kind = receiver is null ? ReceiverKind.Client : receiver.Kind;
        Subject = subject;
        Queue = queue;
        Sid = sid;
        Weight = weight;
    }

    /// <summary>The owner, where matches go.</summary>
    public Receiver Receiver { get; }

    /// <summary>The receiver's kind, kept beside the subject the fan-out already reads.</summary>
    public readonly ReceiverKind Kind;

    /// <summary>A remote queue subscription stands for this many members of its group (RS+ weight).</summary>
    public volatile int Weight;

    /// <summary>The client connection this subscription belongs to (its own, or the internal one holding a
    /// handler's); null for imports, peers' interest and subsystem subscriptions tracked elsewhere.</summary>
    public ClientConnection? Client => Kind switch
    {
        ReceiverKind.Client => Unsafe.As<ClientConnection>(Receiver),
        ReceiverKind.Message => Unsafe.As<MessageReceiver>(Receiver).Connection,
        _ => null,
    };

    /// <summary>The import or response route, for an <see cref="ReceiverKind.Import"/> subscription.</summary>
    public Accounts.InternalRoute? Route => Kind == ReceiverKind.Import ? Unsafe.As<Accounts.InternalRoute>(Receiver) : null;

    /// <summary>The route whose peer holds this interest; null for every local subscription.</summary>
    public Routes.RouteConnection? Remote => Kind == ReceiverKind.Remote ? Receiver as Routes.RouteConnection : null;

    public byte[] Subject { get; }
    public byte[]? Queue { get; }
    public byte[] Sid { get; }

    /// <summary>For interest a leaf connection brought (or a route relayed with LS+): the cluster of the leaf it came from
    /// (Go's sub.origin), so it is never offered back to that cluster.</summary>
    public string? Origin { get; init; }

    /// <summary>Stands in for a service import (Go's sub.si): not interest to announce to other clusters.</summary>
    public bool IsServiceImport { get; init; }

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
