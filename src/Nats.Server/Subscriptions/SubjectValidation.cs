namespace Nats.Server.Subscriptions;

/// <summary>Subject rules, mirroring IsValidSubject / IsValidLiteralSubject in the Go sublist.</summary>
internal static class SubjectValidation
{
    public const byte Separator = (byte)'.';
    public const byte SingleWildcard = (byte)'*';
    public const byte FullWildcard = (byte)'>';

    /// <summary>A subscription subject: no empty tokens, no whitespace, '>' only as the last token.</summary>
    public static bool IsValidSubject(ReadOnlySpan<byte> subject)
    {
        if (subject.IsEmpty)
        {
            return false;
        }
        var sawFullWildcard = false;
        foreach (var token in new SubjectTokenizer(subject))
        {
            if (token.IsEmpty || sawFullWildcard)
            {
                return false;
            }
            if (token.ContainsAny(" \t\n\r\f"u8))
            {
                return false;
            }
            if (token.Length == 1 && token[0] == FullWildcard)
            {
                sawFullWildcard = true;
            }
        }
        return true;
    }

    /// <summary>A subject usable for publishing: valid and without wildcard tokens.</summary>
    public static bool IsValidLiteralSubject(ReadOnlySpan<byte> subject)
    {
        foreach (var token in new SubjectTokenizer(subject))
        {
            if (token.IsEmpty)
            {
                return false;
            }
            if (token.Length == 1 && (token[0] == SingleWildcard || token[0] == FullWildcard))
            {
                return false;
            }
        }
        return true;
    }

    public static bool IsLiteral(ReadOnlySpan<byte> subject)
    {
        foreach (var token in new SubjectTokenizer(subject))
        {
            if (token.Length == 1 && (token[0] == SingleWildcard || token[0] == FullWildcard))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>True when a literal subject is matched by a (possibly wildcard) filter.</summary>
    public static bool Matches(ReadOnlySpan<byte> literal, ReadOnlySpan<byte> filter)
    {
        var subjectTokens = new SubjectTokenizer(literal).GetEnumerator();
        foreach (var f in new SubjectTokenizer(filter))
        {
            if (f.Length == 1 && f[0] == FullWildcard)
            {
                return subjectTokens.MoveNext();
            }
            if (!subjectTokens.MoveNext())
            {
                return false;
            }
            if (f.Length == 1 && f[0] == SingleWildcard)
            {
                continue;
            }
            if (!f.SequenceEqual(subjectTokens.Current))
            {
                return false;
            }
        }
        return !subjectTokens.MoveNext();
    }
}

/// <summary>Allocation-free enumeration of the dot-separated tokens of a subject.</summary>
internal ref struct SubjectTokenizer
{
    private readonly ReadOnlySpan<byte> _subject;
    private int _next;
    private ReadOnlySpan<byte> _current;

    public SubjectTokenizer(ReadOnlySpan<byte> subject)
    {
        _subject = subject;
        _next = 0;
        _current = default;
    }

    public readonly SubjectTokenizer GetEnumerator() => this;

    public readonly ReadOnlySpan<byte> Current => _current;

    public bool MoveNext()
    {
        if (_next > _subject.Length)
        {
            return false;
        }
        var rest = _subject[_next..];
        var dot = rest.IndexOf(SubjectValidation.Separator);
        if (dot < 0)
        {
            _current = rest;
            _next = _subject.Length + 1;
        }
        else
        {
            _current = rest[..dot];
            _next += dot + 1;
        }
        return true;
    }
}
