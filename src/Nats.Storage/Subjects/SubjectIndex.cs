using Nats.Subjects;

namespace Nats.Storage.Subjects;

/// <summary>Receives matching subjects; returning false stops the walk early.</summary>
internal interface ISubjectVisitor
{
    bool Visit(SubjectInfo info);
}

/// <summary>
/// Every subject a store holds, with its totals: a hash map for literal lookups plus a token trie so a
/// wildcard filter visits only the subjects it can match (and can stop early), instead of every message.
/// </summary>
internal sealed class SubjectIndex
{
    private readonly Dictionary<string, SubjectInfo> _bySubject = new(StringComparer.Ordinal);
    private readonly TrieNode _root = new(null, "");

    public int Count => _bySubject.Count;

    public Dictionary<string, SubjectInfo>.ValueCollection All => _bySubject.Values;

    public SubjectInfo? Find(string subject) => _bySubject.GetValueOrDefault(subject);

    /// <summary>Recovery path: finds a subject from its UTF-8 bytes without allocating when it is known.</summary>
    public SubjectInfo GetOrAdd(ReadOnlySpan<byte> utf8)
    {
        var max = System.Text.Encoding.UTF8.GetMaxCharCount(utf8.Length);
        Span<char> chars = max <= 512 ? stackalloc char[max] : new char[max];
        var n = System.Text.Encoding.UTF8.GetChars(utf8, chars);
        var lookup = _bySubject.GetAlternateLookup<ReadOnlySpan<char>>();
        return lookup.TryGetValue(chars[..n], out var info) ? info : GetOrAdd(new string(chars[..n]));
    }

    /// <summary>A known subject from its UTF-8 bytes (index page rebuilds), without allocating.</summary>
    public SubjectInfo? Find(ReadOnlySpan<byte> utf8)
    {
        var max = System.Text.Encoding.UTF8.GetMaxCharCount(utf8.Length);
        Span<char> chars = max <= 512 ? stackalloc char[max] : new char[max];
        var n = System.Text.Encoding.UTF8.GetChars(utf8, chars);
        return _bySubject.GetAlternateLookup<ReadOnlySpan<char>>().TryGetValue(chars[..n], out var info) ? info : null;
    }

    public SubjectInfo GetOrAdd(string subject)
    {
        if (_bySubject.TryGetValue(subject, out var info))
        {
            return info;
        }

        info = new SubjectInfo(subject);
        _bySubject.Add(subject, info);
        var node = _root;
        var pos = 0;
        while (true)
        {
            var end = subject.IndexOf('.', pos);
            var token = end < 0 ? subject[pos..] : subject[pos..end];
            node.Children ??= new Dictionary<string, TrieNode>(StringComparer.Ordinal);
            if (!node.Children.TryGetValue(token, out var child))
            {
                child = new TrieNode(node, token);
                node.Children.Add(token, child);
            }
            node = child;
            if (end < 0)
            {
                break;
            }

            pos = end + 1;
        }
        node.Value = info;
        info.Node = node;
        return info;
    }

    public void Remove(SubjectInfo info)
    {
        if (!_bySubject.Remove(info.Subject))
        {
            return;
        }

        var node = info.Node;
        info.Node = null;
        if (node is null)
        {
            return;
        }

        node.Value = null;
        while (node.Parent is { } parent && node.IsEmpty)
        {
            parent.Children!.Remove(node.Token);
            node = parent;
        }
    }

    public void Clear()
    {
        _bySubject.Clear();
        _root.Children = null;
    }

    /// <summary>Visits subjects matching the filter; returns false if the visitor stopped the walk.</summary>
    public bool Match<TVisitor>(string filter, string[]? tokens, ref TVisitor visitor)
        where TVisitor : struct, ISubjectVisitor
    {
        if (SubjectRules.IsMatchAll(filter))
        {
            foreach (var info in _bySubject.Values)
            {
                if (!visitor.Visit(info))
                {
                    return false;
                }
            }
            return true;
        }
        if (tokens is null)
        {
            return _bySubject.TryGetValue(filter, out var one) ? visitor.Visit(one) : true;
        }

        return MatchNode(_root, tokens, 0, ref visitor);
    }

    private static bool MatchNode<TVisitor>(TrieNode node, string[] tokens, int index, ref TVisitor visitor)
        where TVisitor : struct, ISubjectVisitor
    {
        if (index == tokens.Length)
        {
            return node.Value is null || visitor.Visit(node.Value);
        }

        if (node.Children is null)
        {
            return true;
        }

        var token = tokens[index];
        if (SubjectTokens.IsFullWildcard(token))
        {
            foreach (var child in node.Children.Values)
            {
                if (!VisitAll(child, ref visitor))
                {
                    return false;
                }
            }
            return true;
        }
        if (SubjectTokens.IsSingleWildcard(token))
        {
            foreach (var child in node.Children.Values)
            {
                if (!MatchNode(child, tokens, index + 1, ref visitor))
                {
                    return false;
                }
            }
            return true;
        }
        return !node.Children.TryGetValue(token, out var next) || MatchNode(next, tokens, index + 1, ref visitor);
    }

    private static bool VisitAll<TVisitor>(TrieNode node, ref TVisitor visitor)
        where TVisitor : struct, ISubjectVisitor
    {
        if (node.Value is not null && !visitor.Visit(node.Value))
        {
            return false;
        }

        if (node.Children is null)
        {
            return true;
        }

        foreach (var child in node.Children.Values)
        {
            if (!VisitAll(child, ref visitor))
            {
                return false;
            }
        }
        return true;
    }
}
