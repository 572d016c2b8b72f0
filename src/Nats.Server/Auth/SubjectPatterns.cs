namespace Nats.Server.Auth;

/// <summary>
/// An allow or deny list compiled for matching, with the semantics of the Go server's per-permission
/// Sublist: the tested subject's tokens are taken literally (a SUB to "foo.*" is matched as the
/// literal token "*", so allow "foo.*" admits it and allow "foo.bar" does not), a subject with an
/// empty token matches nothing, and an entry "subject queue" is a queue-group entry.
/// Lists are short, so a linear scan is used; callers cache results where it matters.
/// </summary>
internal sealed class SubjectPatterns
{
    private readonly Entry[] _entries;

    private SubjectPatterns(Entry[] entries)
    {
        _entries = entries;
    }

    public int Count => _entries.Length;

    /// <summary>Compiles entries; with <paramref name="allowQueues"/> "subject queue" entries become queue entries.</summary>
    public static SubjectPatterns Compile(IEnumerable<string> entries, bool allowQueues)
    {
        var compiled = new List<Entry>();
        foreach (var raw in entries)
        {
            string subject = raw;
            string? queue = null;
            if (allowQueues)
            {
                var fields = raw.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length == 0 || fields.Length > 2)
                {
                    continue;
                }
                subject = fields[0];
                queue = fields.Length == 2 ? fields[1] : null;
            }
            // Go's Sublist.Insert refuses malformed subjects and the permission code ignores the error.
            if (!IsValidSubject(subject))
            {
                continue;
            }
            var tokens = subject.Split('.');
            compiled.Add(new Entry(tokens, tokens.Select(System.Text.Encoding.UTF8.GetBytes).ToArray(), queue));
        }
        return new SubjectPatterns([.. compiled]);
    }

    /// <summary>
    /// True when a plain (non-queue) entry matches the subject bytes; used on the publish and delivery
    /// paths on a cache miss, so it works on the span without allocating.
    /// </summary>
    public bool MatchesPlain(ReadOnlySpan<byte> subject)
    {
        if (subject.IsEmpty || subject[0] == (byte)'.' || subject[^1] == (byte)'.' || subject.IndexOf(".."u8) >= 0)
        {
            return false;
        }
        foreach (var entry in _entries)
        {
            if (entry.Queue is null && Matches(entry.Utf8Tokens, subject))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>True when a plain (non-queue) entry matches.</summary>
    public bool MatchesPlain(string subject)
    {
        var tokens = Tokenize(subject);
        if (tokens is null)
        {
            return false;
        }
        foreach (var entry in _entries)
        {
            if (entry.Queue is null && Matches(entry.Tokens, tokens))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Go's Sublist.Match split into "any plain match" and the queue names of matching queue entries.</summary>
    public void Match(string subject, out bool anyPlain, out List<string>? queues)
    {
        anyPlain = false;
        queues = null;
        var tokens = Tokenize(subject);
        if (tokens is null)
        {
            return;
        }
        foreach (var entry in _entries)
        {
            if (!Matches(entry.Tokens, tokens))
            {
                continue;
            }
            if (entry.Queue is null)
            {
                anyPlain = true;
            }
            else
            {
                (queues ??= []).Add(entry.Queue);
            }
        }
    }

    /// <summary>Go's queueMatches: a queue name matches literally, or as a subset of a wildcard queue entry.</summary>
    public static bool QueueMatches(string queue, List<string> queueEntries)
    {
        foreach (var name in queueEntries)
        {
            if (queue == name || (HasWildcard(name) && IsSubsetMatch(queue, name)))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Go's subjectIsSubsetMatch(subject, test): every subject <paramref name="subject"/> covers is covered by <paramref name="test"/>.</summary>
    public static bool IsSubsetMatch(string subject, string test)
    {
        var tokens = subject.Split('.');
        var testTokens = test.Split('.');
        for (var i = 0; i < testTokens.Length; i++)
        {
            if (i >= tokens.Length)
            {
                return false;
            }
            var t2 = testTokens[i];
            if (t2.Length == 0)
            {
                return false;
            }
            if (t2 == ">")
            {
                return true;
            }
            var t1 = tokens[i];
            if (t1.Length == 0 || t1 == ">")
            {
                return false;
            }
            if (t1 == "*")
            {
                if (t2 != "*")
                {
                    return false;
                }
                continue;
            }
            if (t2 != "*" && t1 != t2)
            {
                return false;
            }
        }
        return tokens.Length == testTokens.Length;
    }

    public static bool HasWildcard(string subject)
    {
        foreach (var token in subject.Split('.'))
        {
            if (token is "*" or ">")
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Go's IsValidSubject: no empty tokens, '>' only last, no whitespace.</summary>
    public static bool IsValidSubject(string subject)
    {
        if (subject.Length == 0)
        {
            return false;
        }
        var sawFull = false;
        foreach (var token in subject.Split('.'))
        {
            if (token.Length == 0 || sawFull)
            {
                return false;
            }
            if (token.AsSpan().IndexOfAny(" \t\n\r\f") >= 0)
            {
                return false;
            }
            if (token == ">")
            {
                sawFull = true;
            }
        }
        return true;
    }

    private static string[]? Tokenize(string subject)
    {
        if (subject.Length == 0)
        {
            return null;
        }
        var tokens = subject.Split('.');
        foreach (var token in tokens)
        {
            if (token.Length == 0)
            {
                return null;
            }
        }
        return tokens;
    }

    // The subject has no empty tokens (checked by the caller); its tokens are compared literally.
    private static bool Matches(byte[][] pattern, ReadOnlySpan<byte> subject)
    {
        var position = 0;
        foreach (var p in pattern)
        {
            if (p is [(byte)'>'])
            {
                return position <= subject.Length;
            }
            if (position > subject.Length)
            {
                return false;
            }
            var rest = subject[position..];
            var dot = rest.IndexOf((byte)'.');
            var token = dot < 0 ? rest : rest[..dot];
            if (p is not [(byte)'*'] && !token.SequenceEqual(p))
            {
                return false;
            }
            position += token.Length + 1;
        }
        return position == subject.Length + 1;
    }

    private static bool Matches(string[] pattern, string[] subject)
    {
        for (var i = 0; i < pattern.Length; i++)
        {
            var p = pattern[i];
            if (p == ">")
            {
                return subject.Length > i;
            }
            if (i >= subject.Length)
            {
                return false;
            }
            if (p != "*" && p != subject[i])
            {
                return false;
            }
        }
        return pattern.Length == subject.Length;
    }

    private readonly record struct Entry(string[] Tokens, byte[][] Utf8Tokens, string? Queue);
}
