using System.Text;

namespace Nats.Server.Mappings;

/// <summary>Tokenising and Go's isSubsetMatch for a published subject against a mapping source.</summary>
internal static class SubjectMatcher
{
    /// <summary>Splits on '.' into <paramref name="tokens"/>; returns the count, or -1 if there are more tokens than room.</summary>
    public static int Tokenize(ReadOnlySpan<byte> subject, Span<Range> tokens)
    {
        var count = 0;
        var start = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            if (subject[i] == (byte)'.')
            {
                if (count == tokens.Length)
                {
                    return -1;
                }
                tokens[count++] = new Range(start, i);
                start = i + 1;
            }
        }
        if (count == tokens.Length)
        {
            return -1;
        }
        tokens[count++] = new Range(start, subject.Length);
        return count;
    }

    public static Range[] Tokenize(ReadOnlySpan<byte> subject)
    {
        var tokens = new Range[subject.Count((byte)'.') + 1];
        Tokenize(subject, tokens);
        return tokens;
    }

    public static byte[][] PatternTokens(string pattern) =>
        pattern.Split('.').Select(Encoding.UTF8.GetBytes).ToArray();

    /// <summary>
    /// Go's isSubsetMatchTokenized: the published tokens fall within the pattern. A '*' published (non-pedantic
    /// clients may) only matches a '*' in the pattern, and a published '>' matches nothing.
    /// </summary>
    public static bool IsSubsetMatch(ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, byte[][] pattern)
    {
        for (var i = 0; i < pattern.Length; i++)
        {
            if (i >= tokens.Length)
            {
                return false;
            }
            var test = pattern[i];
            if (test.Length == 0)
            {
                return false;
            }
            if (test is [(byte)'>'])
            {
                return true;
            }
            var token = subject[tokens[i]];
            if (token.IsEmpty || token is [(byte)'>'])
            {
                return false;
            }
            if (token is [(byte)'*'])
            {
                if (test is not [(byte)'*'])
                {
                    return false;
                }
                continue;
            }
            if (test[0] != (byte)'*' && !token.SequenceEqual(test))
            {
                return false;
            }
        }
        return tokens.Length == pattern.Length;
    }
}
