using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// A connection's subscriptions by sid, kept in step with its account's index. SUB and UNSUB come
/// from the client's read loop, auto-unsubscribe from publishers' loops, close and monitoring from
/// anywhere: the map has its own lock, taken once per change, never per delivery.
/// </summary>
internal sealed class ClientSubscriptions
{
    private readonly Dictionary<byte[], Subscription> _bySid = new(ByteKeyComparer.Instance);
    private readonly Lock _lock = new();
    private Subscription[]? _atClose;

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _bySid.Count;
            }
        }
    }

    /// <summary>Subscriptions removed when the connection closed, kept for the closed-connections list.</summary>
    public IReadOnlyList<Subscription> AtClose => _atClose ?? [];

    /// <summary>The number held, and whether <paramref name="sid"/> is one of them (one lock for SUB's two checks).</summary>
    public int CountAndFind(ReadOnlySpan<byte> sid, out bool exists)
    {
        lock (_lock)
        {
            exists = _bySid.GetAlternateLookup<ReadOnlySpan<byte>>().ContainsKey(sid);
            return _bySid.Count;
        }
    }

    public Subscription? Find(ReadOnlySpan<byte> sid)
    {
        lock (_lock)
        {
            _bySid.GetAlternateLookup<ReadOnlySpan<byte>>().TryGetValue(sid, out var subscription);
            return subscription;
        }
    }

    /// <summary>Records <paramref name="subscription"/> under its sid and inserts it in <paramref name="index"/>; false (nothing kept) for an invalid subject.</summary>
    public bool Add(Subscription subscription, SubList index)
    {
        lock (_lock)
        {
            _bySid[subscription.Sid] = subscription;
        }
        if (index.Insert(subscription))
        {
            return true;
        }
        lock (_lock)
        {
            _bySid.Remove(subscription.Sid);
        }
        return false;
    }

    /// <summary>Takes a subscription out of the map and the account's index (UNSUB, auto-unsubscribe); false when it was already gone.</summary>
    public bool Remove(Subscription subscription, Account account)
    {
        lock (_lock)
        {
            if (!_bySid.TryGetValue(subscription.Sid, out var current) || !ReferenceEquals(current, subscription))
            {
                return false;
            }
            _bySid.Remove(subscription.Sid);
        }
        account.SubList.Remove(subscription);
        account.OnSubscriptionRemoved(subscription);
        return true;
    }

    /// <summary>Removes everything from <paramref name="account"/>'s index at close, keeping the list for monitoring.</summary>
    public void RemoveAll(Account account)
    {
        Subscription[] all;
        lock (_lock)
        {
            all = [.. _bySid.Values];
            _bySid.Clear();
        }
        _atClose = all;
        if (all.Length > 0)
        {
            account.SubList.RemoveBatch(all);
            account.OnSubscriptionsRemoved(all);
        }
    }

    public List<Subscription> Snapshot()
    {
        lock (_lock)
        {
            return [.. _bySid.Values];
        }
    }
}
