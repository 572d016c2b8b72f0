using Nats.Subjects;

namespace Nats.Server.Subscriptions;

internal sealed partial class SubList
{
    /// <summary>One token position: literal children by token, plus the '*' and '>' children.</summary>
    private sealed class Level
    {
        private Dictionary<byte[], Node>? _literals;
        private Dictionary<byte[], Node>.AlternateLookup<ReadOnlySpan<byte>> _lookup;

        public Node? PartialWildcard;
        public Node? FullWildcard;

        public bool IsEmpty => (_literals is null || _literals.Count == 0) && PartialWildcard is null && FullWildcard is null;

        /// <summary>The child for a literal token only: a published "*" or ">" is just a token and must not reach the wildcard children.</summary>
        public Node? FindLiteral(ReadOnlySpan<byte> token) =>
            _literals is not null && _lookup.TryGetValue(token, out var node) ? node : null;

        public Node? Find(ReadOnlySpan<byte> token)
        {
            if (SubjectTokens.IsSingleWildcard(token))
            {
                return PartialWildcard;
            }
            if (SubjectTokens.IsFullWildcard(token))
            {
                return FullWildcard;
            }
            return _literals is not null && _lookup.TryGetValue(token, out var node) ? node : null;
        }

        public Node GetOrAdd(ReadOnlySpan<byte> token)
        {
            if (SubjectTokens.IsSingleWildcard(token))
            {
                return PartialWildcard ??= new Node();
            }
            if (SubjectTokens.IsFullWildcard(token))
            {
                return FullWildcard ??= new Node();
            }
            if (_literals is null)
            {
                _literals = new Dictionary<byte[], Node>(ByteKeyComparer.Instance);
                _lookup = _literals.GetAlternateLookup<ReadOnlySpan<byte>>();
            }
            if (!_lookup.TryGetValue(token, out var node))
            {
                node = new Node();
                _literals[token.ToArray()] = node;
            }
            return node;
        }

        public void RemoveNode(ReadOnlySpan<byte> token)
        {
            if (SubjectTokens.IsSingleWildcard(token))
            {
                PartialWildcard = null;
                return;
            }
            if (SubjectTokens.IsFullWildcard(token))
            {
                FullWildcard = null;
                return;
            }
            if (_literals is not null)
            {
                _lookup.Remove(token);
            }
        }

        public IEnumerable<Node> Nodes()
        {
            if (_literals is not null)
            {
                foreach (var node in _literals.Values)
                {
                    yield return node;
                }
            }
            if (PartialWildcard is not null)
            {
                yield return PartialWildcard;
            }
            if (FullWildcard is not null)
            {
                yield return FullWildcard;
            }
        }
    }

    /// <summary>Subscriptions ending at a token, split into plain ones and queue groups.</summary>
    private sealed class Node
    {
        private HashSet<Subscription>? _plain;
        private Dictionary<byte[], HashSet<Subscription>>? _queues;
        private SubListResult? _result;

        public Level? Next;

        public bool HasSubscriptions => _plain is { Count: > 0 } || _queues is { Count: > 0 };

        /// <summary>
        /// This node's subscriptions alone as a result, built once per change: a match that ends at
        /// one node (every reply inbox under one wildcard subscription) then allocates nothing.
        /// </summary>
        public SubListResult Result()
        {
            if (_result is not null)
            {
                return _result;
            }
            var plain = _plain is { Count: > 0 } ? _plain.ToArray() : [];
            Subscription[][] groups = [];
            if (_queues is { Count: > 0 })
            {
                groups = new Subscription[_queues.Count][];
                var i = 0;
                foreach (var members in _queues.Values)
                {
                    groups[i++] = members.ToArray();
                }
            }
            return _result = new SubListResult(plain, groups);
        }

        public bool IsEmpty => (_plain is null || _plain.Count == 0) && (_queues is null || _queues.Count == 0);

        public HashSet<Subscription>? Plain => _plain;
        public Dictionary<byte[], HashSet<Subscription>>? Queues => _queues;

        public void Add(Subscription subscription)
        {
            _result = null;
            if (subscription.Queue is null)
            {
                (_plain ??= []).Add(subscription);
                return;
            }
            _queues ??= new Dictionary<byte[], HashSet<Subscription>>(ByteKeyComparer.Instance);
            if (!_queues.TryGetValue(subscription.Queue, out var members))
            {
                members = [];
                _queues[subscription.Queue] = members;
            }
            members.Add(subscription);
        }

        public bool Remove(Subscription subscription)
        {
            _result = null;
            if (subscription.Queue is null)
            {
                return _plain is not null && _plain.Remove(subscription);
            }
            if (_queues is null || !_queues.TryGetValue(subscription.Queue, out var members) || !members.Remove(subscription))
            {
                return false;
            }
            if (members.Count == 0)
            {
                _queues.Remove(subscription.Queue);
            }
            return true;
        }

        public void CollectInto(List<Subscription> into)
        {
            if (_plain is not null)
            {
                into.AddRange(_plain);
            }
            if (_queues is not null)
            {
                foreach (var members in _queues.Values)
                {
                    into.AddRange(members);
                }
            }
        }
    }

    /// <summary>Gathers a match; queue members of the same group found at different nodes are merged.</summary>
    private struct MatchCollector
    {
        private Node? _single;
        private List<Subscription>? _plain;
        private List<(byte[] Name, List<Subscription> Members)>? _queues;
        private bool _merged;

        public void Add(Node node)
        {
            if (!node.HasSubscriptions)
            {
                return;
            }
            if (!_merged)
            {
                if (_single is null)
                {
                    // Lists only once a second node contributes; one node answers with its own result.
                    _single = node;
                    return;
                }
                _merged = true;
                Merge(_single);
            }
            Merge(node);
        }

        private void Merge(Node node)
        {
            if (node.Plain is { Count: > 0 } plain)
            {
                (_plain ??= []).AddRange(plain);
            }
            if (node.Queues is { Count: > 0 } queues)
            {
                _queues ??= [];
                foreach (var (name, members) in queues)
                {
                    var group = _queues.Find(g => g.Name.AsSpan().SequenceEqual(name));
                    if (group.Members is null)
                    {
                        group = (name, new List<Subscription>());
                        _queues.Add(group);
                    }
                    group.Members.AddRange(members);
                }
            }
        }

        public readonly SubListResult ToResult()
        {
            if (!_merged)
            {
                return _single?.Result() ?? SubListResult.Empty;
            }
            if (_plain is null && _queues is null)
            {
                return SubListResult.Empty;
            }
            var groups = _queues is null ? [] : _queues.Select(g => g.Members.ToArray()).ToArray();
            return new SubListResult(_plain?.ToArray() ?? [], groups);
        }
    }
}
