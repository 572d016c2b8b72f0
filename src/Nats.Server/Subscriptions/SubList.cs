using Nats.Subjects;

namespace Nats.Server.Subscriptions;

/// <summary>
/// The subscription index: a trie over subject tokens with '*' and '>' branches at every level
/// (the Go server's sublist), plus a bounded cache of match results per published subject.
/// Writers and cache misses take one lock; readers on the hot path avoid it entirely by keeping a
/// per-connection cache validated against <see cref="GenerationId"/>.
/// </summary>
internal sealed partial class SubList
{
    private const int MaxCacheEntries = 1024;
    private const int CacheSweepTarget = 768;
    private const int MaxTokens = 256;

    private readonly Lock _lock = new();
    private readonly Level _root = new();
    private readonly Dictionary<byte[], SubListResult> _cache = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], SubListResult>.AlternateLookup<ReadOnlySpan<byte>> _cacheLookup;
    private readonly AdmissionFilter _admission = new();
    private long _generationId;
    private int _count;
    private long _inserts;
    private long _removes;
    private long _matches;
    private long _cacheHits;

    public SubList()
    {
        _cacheLookup = _cache.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    /// <summary>Changes on every insert and removal; a cached result is valid while it is unchanged.</summary>
    public long GenerationId => Volatile.Read(ref _generationId);

    public int Count => Volatile.Read(ref _count);

    public SubListStats GetStats()
    {
        lock (_lock)
        {
            return new SubListStats(_count, _cache.Count, _inserts, _removes, _matches, _cacheHits);
        }
    }

    /// <summary>Raised after a subscription is added, outside the lock, with its subject (Go's sublist
    /// interest notifications: a push consumer starts delivering when its deliver subject gains interest).</summary>
    public event Action<byte[]>? Inserted;

    /// <summary>
    /// Told of every insert and removal under the index lock (routes: the interest counts that become
    /// RS+/RS-), so the order it sees is the order of the index itself and a racing SUB and UNSUB can
    /// never leave a peer with stale or missing interest. Null on a server without routes.
    /// </summary>
    internal ISubscriptionObserver? Observer;

    /// <summary>Adds a subscription; false when its subject is not a valid subscription subject.</summary>
    public bool Insert(Subscription subscription)
    {
        var subject = subscription.Subject;
        if (!SubjectRules.IsValid(subject))
        {
            return false;
        }
        lock (_lock)
        {
            var level = _root;
            Node? node = null;
            foreach (var token in new SubjectTokenizer<byte>(subject))
            {
                node = level.GetOrAdd(subject.AsSpan()[token]);
                level = node.Next ??= new Level();
            }
            node!.Add(subscription);
            Observer?.Changed(subscription, 1);
            _count++;
            _inserts++;
            InvalidateCacheFor(subject);
            Interlocked.Increment(ref _generationId);
        }
        Inserted?.Invoke(subject);
        return true;
    }

    /// <summary>Removes a subscription; false when it was not present.</summary>
    public bool Remove(Subscription subscription)
    {
        lock (_lock)
        {
            return RemoveLocked(subscription);
        }
    }

    /// <summary>Removes many subscriptions under one lock, as when a connection closes.</summary>
    public void RemoveBatch(IEnumerable<Subscription> subscriptions)
    {
        lock (_lock)
        {
            // One cache reset for the whole batch (as Go does) instead of a cache scan per subscription.
            _cache.Clear();
            foreach (var subscription in subscriptions)
            {
                RemoveLocked(subscription);
            }
        }
    }

    /// <summary>Every subscription whose subject matches the published subject.</summary>
    public SubListResult Match(ReadOnlySpan<byte> subject)
    {
        lock (_lock)
        {
            _matches++;
            if (_cacheLookup.TryGetValue(subject, out var cached))
            {
                _cacheHits++;
                return cached;
            }

            Span<Range> tokens = stackalloc Range[MaxTokens];
            var tokenCount = SubjectTokens.TokenizeNonEmpty(subject, tokens);
            if (tokenCount <= 0)
            {
                return SubListResult.Empty;
            }

            var collector = new MatchCollector();
            MatchLevel(_root, subject, tokens[..tokenCount], ref collector);
            var result = collector.ToResult();

            // One-shot subjects (request inboxes) are matched but not cached: caching them would copy a
            // key per request and sweep entries that are reused.
            if (!_admission.Admit(ByteKeyComparer.Hash(subject)))
            {
                return result;
            }
            if (_cache.Count >= MaxCacheEntries)
            {
                SweepCache();
            }
            _cache[subject.ToArray()] = result;
            return result;
        }
    }

    /// <summary>Every subscription in the index, for monitoring.</summary>
    public List<Subscription> All()
    {
        var all = new List<Subscription>();
        lock (_lock)
        {
            CollectAll(_root, all);
        }
        return all;
    }

    /// <summary>Starts telling <paramref name="observer"/> of every change, beside the observers already there
    /// (routes and leaf connections each watch an account's index), after showing it, under the same lock,
    /// every subscription already here: no change falls between the two.</summary>
    internal void AddObserver(ISubscriptionObserver observer)
    {
        lock (_lock)
        {
            var all = new List<Subscription>();
            CollectAll(_root, all);
            foreach (var subscription in all)
            {
                observer.Changed(subscription, 1);
            }
            Observer = Observer is null ? observer : new ObserverPair(Observer, observer);
        }
    }

    /// <summary>Runs <paramref name="action"/> with every subscription, under the index lock: no change falls between
    /// the snapshot and what the action sets up.</summary>
    internal void WithSnapshot(Action<List<Subscription>> action)
    {
        lock (_lock)
        {
            var all = new List<Subscription>();
            CollectAll(_root, all);
            action(all);
        }
    }

    /// <summary>Finds an observer of type <typeparamref name="T"/> among those attached.</summary>
    internal T? FindObserver<T>() where T : class, ISubscriptionObserver
    {
        var observer = Observer;
        while (observer is ObserverPair pair)
        {
            if (pair.Second is T second)
            {
                return second;
            }
            observer = pair.First;
        }
        return observer as T;
    }

    private bool RemoveLocked(Subscription subscription)
    {
        var subject = subscription.Subject;
        Span<Range> tokens = stackalloc Range[MaxTokens];
        var tokenCount = SubjectTokens.TokenizeNonEmpty(subject, tokens);
        if (tokenCount <= 0)
        {
            return false;
        }

        // Remember the path so emptied nodes can be pruned bottom-up; churn (inboxes) must not leak.
        var levels = new Level[tokenCount];
        var nodes = new Node[tokenCount];
        var level = _root;
        for (var i = 0; i < tokenCount; i++)
        {
            var node = level?.Find(subject.AsSpan()[tokens[i]]);
            if (node is null)
            {
                return false;
            }
            levels[i] = level!;
            nodes[i] = node;
            level = node.Next;
        }

        if (!nodes[tokenCount - 1].Remove(subscription))
        {
            return false;
        }
        subscription.Closed = true;
        Observer?.Changed(subscription, -1);
        _count--;
        _removes++;

        for (var i = tokenCount - 1; i >= 0; i--)
        {
            var node = nodes[i];
            if (!node.IsEmpty || (node.Next is not null && !node.Next.IsEmpty))
            {
                break;
            }
            levels[i].RemoveNode(subject.AsSpan()[tokens[i]]);
        }

        InvalidateCacheFor(subject);
        Interlocked.Increment(ref _generationId);
        return true;
    }

    private void InvalidateCacheFor(byte[] subject)
    {
        if (_cache.Count == 0)
        {
            return;
        }
        if (SubjectRules.IsLiteral(subject))
        {
            _cacheLookup.Remove(subject);
            return;
        }
        List<byte[]>? stale = null;
        foreach (var key in _cache.Keys)
        {
            if (SubjectRules.Matches(key, subject))
            {
                (stale ??= []).Add(key);
            }
        }
        if (stale is not null)
        {
            foreach (var key in stale)
            {
                _cache.Remove(key);
            }
        }
    }

    private void SweepCache()
    {
        var excess = _cache.Count - CacheSweepTarget;
        var victims = new List<byte[]>(excess);
        foreach (var key in _cache.Keys)
        {
            if (victims.Count >= excess)
            {
                break;
            }
            victims.Add(key);
        }
        foreach (var key in victims)
        {
            _cache.Remove(key);
        }
    }

    // Mirrors matchLevel in the Go sublist: '>' matches the rest, '*' recurses on the remainder.
    private static void MatchLevel(Level? level, ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, ref MatchCollector collector)
    {
        Node? literal = null;
        Node? partial = null;
        for (var i = 0; i < tokens.Length; i++)
        {
            if (level is null)
            {
                return;
            }
            if (level.FullWildcard is { } full)
            {
                collector.Add(full);
            }
            partial = level.PartialWildcard;
            if (partial is not null)
            {
                MatchLevel(partial.Next, subject, tokens[(i + 1)..], ref collector);
            }
            literal = level.FindLiteral(subject[tokens[i]]);
            level = literal?.Next;
        }
        if (literal is not null)
        {
            collector.Add(literal);
        }
        if (partial is not null)
        {
            collector.Add(partial);
        }
    }

    private static void CollectAll(Level level, List<Subscription> into)
    {
        foreach (var node in level.Nodes())
        {
            node.CollectInto(into);
            if (node.Next is not null)
            {
                CollectAll(node.Next, into);
            }
        }
    }
}

/// <summary>Sees every change of a <see cref="SubList"/>, under its lock: return quickly, take no lock that can wait on the index.</summary>
internal interface ISubscriptionObserver
{
    void Changed(Subscription subscription, int delta);
}

/// <summary>Two observers of one index, told in the order they were attached.</summary>
internal sealed class ObserverPair(ISubscriptionObserver first, ISubscriptionObserver second) : ISubscriptionObserver
{
    public ISubscriptionObserver First { get; } = first;
    public ISubscriptionObserver Second { get; } = second;

    public void Changed(Subscription subscription, int delta)
    {
        First.Changed(subscription, delta);
        Second.Changed(subscription, delta);
    }
}

internal readonly record struct SubListStats(int Subscriptions, int CacheEntries, long Inserts, long Removes, long Matches, long CacheHits);
