using Nats.Server.Subscriptions;

namespace Nats.Server.LeafNodes;

/// <summary>
/// What we told one leaf connection we are interested in (Go's c.leaf.smap): counts per "subject" or
/// "subject queue" key, LS+ on 0→1 and LS- on 1→0, and for a queue group an LS+ with the new count on every
/// change. Fed by <see cref="LeafAccountInterest"/> under the account index's lock, so the peer sees changes in
/// index order. Which subscriptions count depends on the role (Go's updateSmap): toward our hub only local
/// interest (and that of leaf connections we are the hub of), toward a spoke everything but its own.
/// </summary>
internal sealed class LeafSubjectMap
{
    private readonly LeafConnection _connection;
    private readonly Dictionary<string, int> _counts = new(StringComparer.Ordinal);
    private readonly Lock _sync = new();
    private bool _ready;

    public LeafSubjectMap(LeafConnection connection) => _connection = connection;

    /// <summary>The initial map (Go's initLeafNodeSmapAndSendSubs): every counted subscription plus the loop-detection
    /// subject, sent as one batch of LS+.</summary>
    /// <param name="mappingSources">The account's mapping sources (Go's initLeafNodeSmapAndSendSubs announces them once, for
    /// good, so a message for a mapped subject crosses to be mapped here).</param>
    public void Init(List<Subscription> all, string loopSubject, IEnumerable<string> mappingSources)
    {
        lock (_sync)
        {
            foreach (var source in mappingSources)
            {
                if (_connection.Role != Delivery.PeerRole.SpokeLeaf || _connection.Permissions.MaySubscribe(System.Text.Encoding.UTF8.GetBytes(source)))
                {
                    _counts[source] = _counts.GetValueOrDefault(source) + 1;
                }
            }
            foreach (var subscription in all)
            {
                if (Counts(subscription))
                {
                    var key = Key(subscription);
                    _counts[key] = _counts.GetValueOrDefault(key) + 1;
                }
            }
            _counts[loopSubject] = _counts.GetValueOrDefault(loopSubject) + 1;
            _ready = true;
            foreach (var (key, count) in _counts)
            {
                _connection.Outbound.AppendLeafInterest(key, count);
            }
        }
    }

    public void Update(Subscription subscription, int delta)
    {
        if (!Counts(subscription))
        {
            return;
        }
        var key = Key(subscription);
        lock (_sync)
        {
            if (!_ready)
            {
                return;
            }
            var n = _counts.GetValueOrDefault(key);
            var update = subscription.Queue is not null || n == 0 || n + delta <= 0;
            n += delta;
            if (n > 0)
            {
                _counts[key] = n;
            }
            else
            {
                _counts.Remove(key);
            }
            if (update)
            {
                _connection.Outbound.AppendLeafInterest(key, Math.Max(n, 0));
            }
        }
    }

    public int Count
    {
        get
        {
            lock (_sync)
            {
                return _counts.Count;
            }
        }
    }

    private bool Counts(Subscription subscription)
    {
        if (ReferenceEquals(subscription.Receiver, _connection))
        {
            return false;
        }
        // Interest of another cluster is not this account's (Go keeps it out of the account's sublist).
        if (subscription.Kind == Delivery.ReceiverKind.Remote && ((Delivery.RemotePeer)subscription.Receiver).Role == Delivery.PeerRole.Gateway)
        {
            return false;
        }
        if (subscription.Kind == Delivery.ReceiverKind.Remote && _connection.Role == Delivery.PeerRole.SpokeLeaf &&
            ((Delivery.RemotePeer)subscription.Receiver).Role != Delivery.PeerRole.HubLeaf)
        {
            return false;
        }
        // The loop-detection subject always goes through: that is how a loop is seen.
        var subject = subscription.Subject;
        if (subject.AsSpan().StartsWith(LeafAccountInterest.LoopPrefix))
        {
            return true;
        }
        // Interest from the peer's own cluster (through another of its servers) is never offered back to it.
        if (subscription.Origin is { Length: > 0 } origin && origin == _connection.RemoteCluster)
        {
            return false;
        }
        return _connection.Permissions.MaySubscribe(subject);
    }

    private static string Key(Subscription subscription) =>
        subscription.QueueString is { } queue ? $"{subscription.SubjectString} {queue}" : subscription.SubjectString;
}
