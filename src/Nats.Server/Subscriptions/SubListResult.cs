namespace Nats.Server.Subscriptions;

/// <summary>
/// What a subject matched: plain subscriptions, and one array per queue group (a message goes to
/// one member of each group). Immutable once built, so it can be cached and shared across threads.
/// </summary>
internal sealed class SubListResult
{
    public static readonly SubListResult Empty = new([], []);

    public SubListResult(Subscription[] plain, Subscription[][] queueGroups)
    {
        Plain = plain;
        QueueGroups = queueGroups;
        foreach (var subscription in plain)
        {
            HasInternal |= subscription.Kind == Delivery.ReceiverKind.Import;
            HasRemote |= subscription.Kind == Delivery.ReceiverKind.Remote;
        }
        foreach (var group in queueGroups)
        {
            foreach (var subscription in group)
            {
                HasRemote |= subscription.Kind == Delivery.ReceiverKind.Remote;
            }
        }
    }

    /// <summary>Some match is a peer server's interest: the message also goes out on routes.</summary>
    public bool HasRemote { get; }

    /// <summary>Some plain match is an internal (import) subscription: the publish path takes its slower branch only then.</summary>
    public bool HasInternal { get; }

    public Subscription[] Plain { get; }
    public Subscription[][] QueueGroups { get; }

    public bool IsEmpty => Plain.Length == 0 && QueueGroups.Length == 0;
}
