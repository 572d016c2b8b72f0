using System.Numerics;

namespace Nats.Subjects;

/// <summary>
/// The Go server's subject rules (server/sublist.go at v2.9.10), the only implementation of each in this
/// code base: validity, literal or wildcard, match, subset and collision. Byte and char forms share one
/// generic algorithm, allocate nothing and are safe on any input (a malformed subject simply fails).
/// </summary>
internal static class SubjectRules
{
    /// <summary>
    /// Go's IsValidSubject, the rule for a subscription subject: not empty, no empty token, '&gt;' only as
    /// the last token, no whitespace (space, \t, \n, \r, \f).
    /// </summary>
    public static bool IsValid(ReadOnlySpan<byte> subject) => IsValid<byte>(subject);

    public static bool IsValid(ReadOnlySpan<char> subject) => IsValid<char>(subject);

    /// <summary>Go's IsValidLiteralSubject: no empty token and no wildcard token (whitespace is not checked).</summary>
    public static bool IsValidLiteral(ReadOnlySpan<byte> subject) => IsValidLiteral<byte>(subject);

    public static bool IsValidLiteral(ReadOnlySpan<char> subject) => IsValidLiteral<char>(subject);

    /// <summary>Go's IsValidPublishSubject: valid and literal.</summary>
    public static bool IsValidPublish(ReadOnlySpan<byte> subject) => IsValid<byte>(subject) && IsLiteral<byte>(subject);

    public static bool IsValidPublish(ReadOnlySpan<char> subject) => IsValid<char>(subject) && IsLiteral<char>(subject);

    /// <summary>Go's subjectIsLiteral: no "*" or "&gt;" token; validity is not checked.</summary>
    public static bool IsLiteral(ReadOnlySpan<byte> subject) => IsLiteral<byte>(subject);

    public static bool IsLiteral(ReadOnlySpan<char> subject) => IsLiteral<char>(subject);

    /// <summary>Go's subjectHasWildcard.</summary>
    public static bool HasWildcard(ReadOnlySpan<byte> subject) => !IsLiteral<byte>(subject);

    public static bool HasWildcard(ReadOnlySpan<char> subject) => !IsLiteral<char>(subject);

    /// <summary>
    /// Go's subjectInfo: false for an empty subject, an empty token or a token after '&gt;'; otherwise the
    /// tokens, the number of '*' tokens and whether the last is '&gt;'.
    /// </summary>
    public static bool Info(string subject, out string[] tokens, out int singleWildcards, out bool fullWildcard)
    {
        tokens = SubjectTokens.Split(subject);
        singleWildcards = 0;
        fullWildcard = false;
        if (subject.Length == 0)
        {
            return false;
        }
        foreach (var token in tokens)
        {
            if (token.Length == 0 || fullWildcard)
            {
                return false;
            }
            fullWildcard = SubjectTokens.IsFullWildcard(token);
            singleWildcards += SubjectTokens.IsSingleWildcard(token) ? 1 : 0;
        }
        return true;
    }

    /// <summary>The stores' "every subject" filter: empty or "&gt;" (Go's subject == _EMPTY_ || subject == fwcs).</summary>
    public static bool IsMatchAll(ReadOnlySpan<char> filter) => filter.IsEmpty || SubjectTokens.IsFullWildcard<char>(filter);

    /// <summary>
    /// What Go's Sublist.Match decides for one subscription: the published <paramref name="subject"/>'s
    /// tokens are taken literally (a published "*" is only matched by a wildcard), "*" in the
    /// <paramref name="pattern"/> matches one token and "&gt;" one or more. A subject with an empty token
    /// matches nothing. For valid cache keys this is Go's matchLiteral.
    /// </summary>
    public static bool Matches(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> pattern) => Matches<byte>(subject, pattern);

    public static bool Matches(ReadOnlySpan<char> subject, ReadOnlySpan<char> pattern) => Matches<char>(subject, pattern);

    /// <summary>
    /// Go's subjectIsSubsetMatch(subject, test): every subject that <paramref name="subject"/> (which may
    /// hold wildcards) matches is matched by <paramref name="test"/>. As in Go, a test token starting with
    /// '*' acts as a wildcard, a subject "*" is covered only by a test "*" or "&gt;", a subject "&gt;" only by
    /// a test "&gt;", and an empty token on either side fails.
    /// </summary>
    public static bool IsSubsetMatch(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> test) => IsSubsetMatch<byte>(subject, test);

    public static bool IsSubsetMatch(ReadOnlySpan<char> subject, ReadOnlySpan<char> test) => IsSubsetMatch<char>(subject, test);

    /// <summary>Go's SubjectsCollide: some literal subject could match both (either may hold wildcards).</summary>
    public static bool Collide(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b) => Collide<byte>(a, b);

    public static bool Collide(ReadOnlySpan<char> a, ReadOnlySpan<char> b) => Collide<char>(a, b);

    private static T Dot<T>()
        where T : unmanaged, IBinaryInteger<T> => T.CreateTruncating(SubjectTokens.Separator);

    private static T Star<T>()
        where T : unmanaged, IBinaryInteger<T> => T.CreateTruncating(SubjectTokens.SingleWildcard);

    private static T Gt<T>()
        where T : unmanaged, IBinaryInteger<T> => T.CreateTruncating(SubjectTokens.FullWildcard);

    private static bool IsValid<T>(ReadOnlySpan<T> subject)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (subject.IsEmpty)
        {
            return false;
        }
        var sawFullWildcard = false;
        var tokens = new SubjectTokenizer<T>(subject);
        while (tokens.Next(out var token))
        {
            if (token.IsEmpty || sawFullWildcard)
            {
                return false;
            }
            if (SubjectTokens.ContainsWhitespace(token))
            {
                return false;
            }
            sawFullWildcard = SubjectTokens.IsFullWildcard(token);
        }
        return true;
    }

    private static bool IsValidLiteral<T>(ReadOnlySpan<T> subject)
        where T : unmanaged, IBinaryInteger<T>
    {
        var tokens = new SubjectTokenizer<T>(subject);
        while (tokens.Next(out var token))
        {
            if (token.IsEmpty || SubjectTokens.IsWildcard(token))
            {
                return false;
            }
        }
        return true;
    }

    // One pass over the characters, as Go's subjectIsLiteral: this runs for every cache change and store filter.
    private static bool IsLiteral<T>(ReadOnlySpan<T> subject)
        where T : unmanaged, IBinaryInteger<T>
    {
        var star = Star<T>();
        var gt = Gt<T>();
        var dot = Dot<T>();
        var from = 0;
        while (true)
        {
            var at = subject[from..].IndexOfAny(star, gt);
            if (at < 0)
            {
                return true;
            }
            var i = from + at;
            if ((i == 0 || subject[i - 1] == dot) && (i + 1 == subject.Length || subject[i + 1] == dot))
            {
                return false;
            }
            from = i + 1;
        }
    }

    private static bool Matches<T>(ReadOnlySpan<T> subject, ReadOnlySpan<T> pattern)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (subject.IsEmpty)
        {
            return false;
        }
        var subjectTokens = new SubjectTokenizer<T>(subject);
        var patternTokens = new SubjectTokenizer<T>(pattern);
        while (patternTokens.Next(out var p))
        {
            if (!subjectTokens.Next(out var s) || s.IsEmpty)
            {
                return false;
            }
            if (SubjectTokens.IsFullWildcard(p))
            {
                // The rest of the subject must still be well formed: Go's match never sees empty tokens.
                while (subjectTokens.Next(out s))
                {
                    if (s.IsEmpty)
                    {
                        return false;
                    }
                }
                return true;
            }
            if (!SubjectTokens.IsSingleWildcard(p) && !s.SequenceEqual(p))
            {
                return false;
            }
        }
        return !subjectTokens.MoveNext();
    }

    private static bool IsSubsetMatch<T>(ReadOnlySpan<T> subject, ReadOnlySpan<T> test)
        where T : unmanaged, IBinaryInteger<T>
    {
        var subjectTokens = new SubjectTokenizer<T>(subject);
        var testTokens = new SubjectTokenizer<T>(test);
        while (testTokens.Next(out var t2))
        {
            if (!subjectTokens.Next(out var t1))
            {
                return false;
            }
            if (t2.IsEmpty)
            {
                return false;
            }
            if (SubjectTokens.IsFullWildcard(t2))
            {
                return true;
            }
            if (t1.IsEmpty || SubjectTokens.IsFullWildcard(t1))
            {
                return false;
            }
            if (SubjectTokens.IsSingleWildcard(t1))
            {
                if (!SubjectTokens.IsSingleWildcard(t2))
                {
                    return false;
                }
                continue;
            }
            if (t2[0] != Star<T>() && !t1.SequenceEqual(t2))
            {
                return false;
            }
        }
        return !subjectTokens.MoveNext();
    }

    private static bool Collide<T>(ReadOnlySpan<T> a, ReadOnlySpan<T> b)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (a.SequenceEqual(b))
        {
            return true;
        }
        var (partialA, fullA, countA) = Analyze(a);
        var (partialB, fullB, countB) = Analyze(b);
        var literalA = !(partialA || fullA);
        var literalB = !(partialB || fullB);
        if (literalA && literalB)
        {
            return false;
        }
        if (literalA)
        {
            return IsSubsetMatch(a, b);
        }
        if (literalB)
        {
            return IsSubsetMatch(b, a);
        }
        // Both have wildcards: a shorter side without '>' cannot reach the longer side's tokens.
        if ((countA < countB && !fullA) || (countB < countA && !fullB))
        {
            return false;
        }
        var tokensA = new SubjectTokenizer<T>(a);
        var tokensB = new SubjectTokenizer<T>(b);
        while (tokensA.Next(out var ta) && tokensB.Next(out var tb))
        {
            if (!TokensCanMatch(ta, tb))
            {
                return false;
            }
        }
        return true;
    }

    // Go's analyzeTokens: which wildcards the subject has, and its token count.
    private static (bool Partial, bool Full, int Count) Analyze<T>(ReadOnlySpan<T> subject)
        where T : unmanaged, IBinaryInteger<T>
    {
        var partial = false;
        var full = false;
        var count = 0;
        var tokens = new SubjectTokenizer<T>(subject);
        while (tokens.Next(out var token))
        {
            count++;
            partial |= SubjectTokens.IsSingleWildcard(token);
            full |= SubjectTokens.IsFullWildcard(token);
        }
        return (partial, full, count);
    }

    // Go's tokensCanMatch: as in Go, any token starting with '*' or '>' counts as a wildcard here.
    private static bool TokensCanMatch<T>(ReadOnlySpan<T> a, ReadOnlySpan<T> b)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (a.IsEmpty || b.IsEmpty)
        {
            return false;
        }
        if (a[0] == Star<T>() || b[0] == Star<T>() || a[0] == Gt<T>() || b[0] == Gt<T>())
        {
            return true;
        }
        return a.SequenceEqual(b);
    }
}
