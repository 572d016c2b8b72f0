using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.Routes;

/// <summary>A test on a subject as it arrives (no string made unless the test needs one).</summary>
internal delegate bool SubjectFilter(ReadOnlySpan<byte> subject);

/// <summary>
/// What one peer told us it is interested in (RS+/RS- on a route, LS+/LS- on a leaf connection), as
/// subscriptions in our accounts' indexes whose matches go back out to that peer. Keyed as Go keys them,
/// "acc subject[ queue]"; a repeated queue RS+ is a weight update. Touched by the peer's read loop, and once
/// more when the connection closes.
/// </summary>
internal sealed class RemoteInterest
{
    private readonly Delivery.RemotePeer _route;
    private readonly Dictionary<string, (Account Account, Subscription Subscription)> _subscriptions = new(StringComparer.Ordinal);
    private readonly Lock _sync = new();
    private bool _closed;

    public RemoteInterest(Delivery.RemotePeer route) => _route = route;

    /// <summary>
    /// Whether interest in a subject may be kept (a route's export permissions); asked under the lock, so a reload that
    /// replaces the permissions and then drops what they no longer admit leaves nothing behind.
    /// </summary>
    public SubjectFilter? Admit { get; init; }

    public int Count
    {
        get
        {
            lock (_sync)
            {
                return _subscriptions.Count;
            }
        }
    }

    /// <summary>RS+: adds the interest, or updates a queue subscription's weight; false when <see cref="Admit"/> refuses it.</summary>
    public bool Add(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight, string? origin = null)
    {
        var key = Key(account, subject, queue);
        lock (_sync)
        {
            if (_closed)
            {
                return true;
            }
            if (Admit is { } admit && !admit(subject))
            {
                return false;
            }
            if (_subscriptions.TryGetValue(key, out var existing))
            {
                if (!queue.IsEmpty)
                {
                    existing.Subscription.Weight = Math.Max(1, weight);
                }
                return true;
            }
            var subscription = new Subscription(_route, subject.ToArray(), queue.IsEmpty ? null : queue.ToArray(), Encoding.UTF8.GetBytes(key),
                Math.Max(1, weight))
            { Origin = origin };
            if (account.SubList.Insert(subscription))
            {
                _subscriptions[key] = (account, subscription);
            }
            return true;
        }
    }

    /// <summary>Drops the interest <see cref="Admit"/> no longer admits (a reload); returns the subjects still held.</summary>
    public List<string> RemoveRefused()
    {
        lock (_sync)
        {
            var refused = _subscriptions.Where(e => Admit is { } admit && !admit(e.Value.Subscription.Subject)).ToList();
            foreach (var group in refused.GroupBy(e => e.Value.Account))
            {
                group.Key.SubList.RemoveBatch(group.Select(e => e.Value.Subscription));
            }
            foreach (var entry in refused)
            {
                _subscriptions.Remove(entry.Key);
            }
            return [.. _subscriptions.Values.Select(e => e.Subscription.SubjectString)];
        }
    }

    /// <summary>RS-: removes the interest with exactly this key.</summary>
    public void Remove(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        var key = Key(account, subject, queue);
        lock (_sync)
        {
            if (_subscriptions.Remove(key, out var entry))
            {
                entry.Account.SubList.Remove(entry.Subscription);
            }
        }
    }

    /// <summary>The route is gone: every subscription it brought leaves the indexes, one batch per account.</summary>
    public void RemoveAll()
    {
        lock (_sync)
        {
            _closed = true;
            foreach (var group in _subscriptions.Values.GroupBy(e => e.Account))
            {
                group.Key.SubList.RemoveBatch(group.Select(e => e.Subscription));
            }
            _subscriptions.Clear();
        }
    }

    /// <summary>The keys, for /routez?subs=1.</summary>
    public List<(string Account, string Subject, string? Queue, int Weight)> Snapshot()
    {
        lock (_sync)
        {
            return _subscriptions.Values
                .Select(e => (e.Account.Name, e.Subscription.SubjectString, e.Subscription.QueueString, e.Subscription.Weight))
                .ToList();
        }
    }

    private static string Key(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        queue.IsEmpty
            ? $"{account.Name} {Encoding.UTF8.GetString(subject)}"
            : $"{account.Name} {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(queue)}";
}
