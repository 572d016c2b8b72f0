using System.Numerics;

namespace Nats.Subjects;

/// <summary>
/// Splitting a subject into its dot-separated tokens and classifying a token, with the Go server's rules
/// (server/sublist.go): a token is a wildcard only when it is exactly "*" or "&gt;" ("foo*" is a literal),
/// and empty tokens are kept so that validity is decided by the caller's rule, not by the splitter.
/// Every form works on bytes (the wire) and on chars (configuration, the store) with one algorithm.
/// </summary>
internal static class SubjectTokens
{
    public const byte Separator = (byte)'.';
    public const byte SingleWildcard = (byte)'*';
    public const byte FullWildcard = (byte)'>';

    public static bool IsSingleWildcard(ReadOnlySpan<byte> token) => IsSingleWildcard<byte>(token);

    public static bool IsSingleWildcard(ReadOnlySpan<char> token) => IsSingleWildcard<char>(token);

    public static bool IsFullWildcard(ReadOnlySpan<byte> token) => IsFullWildcard<byte>(token);

    public static bool IsFullWildcard(ReadOnlySpan<char> token) => IsFullWildcard<char>(token);

    public static bool IsWildcard(ReadOnlySpan<byte> token) => IsWildcard<byte>(token);

    public static bool IsWildcard(ReadOnlySpan<char> token) => IsWildcard<char>(token);

    /// <summary>
    /// Go's tokenizeSubjectIntoSlice into <paramref name="tokens"/>: every token, empty ones included.
    /// Returns the count, or -1 when the subject has more tokens than there is room for.
    /// </summary>
    public static int Tokenize(ReadOnlySpan<byte> subject, Span<Range> tokens) => Tokenize<byte>(subject, tokens, false);

    public static int Tokenize(ReadOnlySpan<char> subject, Span<Range> tokens) => Tokenize<char>(subject, tokens, false);

    /// <summary>
    /// The tokenising of Go's Sublist.match: -1 for an empty subject or an empty token (such a published
    /// subject matches nothing) as well as when there is no room.
    /// </summary>
    public static int TokenizeNonEmpty(ReadOnlySpan<byte> subject, Span<Range> tokens) => Tokenize<byte>(subject, tokens, true);

    /// <summary>Every token of a subject as ranges, for subjects too long for a caller's stack buffer.</summary>
    public static Range[] Tokenize(ReadOnlySpan<byte> subject)
    {
        var tokens = new Range[Count(subject)];
        Tokenize(subject, tokens);
        return tokens;
    }

    /// <summary>Go's strings.Split(subject, "."): the string form where callers keep the tokens.</summary>
    public static string[] Split(string subject) => subject.Split((char)Separator);

    /// <summary>Go's numTokens: 0 for an empty subject, else separators + 1.</summary>
    public static int Count(ReadOnlySpan<byte> subject) => subject.IsEmpty ? 0 : subject.Count(Separator) + 1;

    public static int Count(ReadOnlySpan<char> subject) => subject.IsEmpty ? 0 : subject.Count((char)Separator) + 1;

    /// <summary>The last token ("" for an empty subject).</summary>
    public static ReadOnlySpan<char> Last(ReadOnlySpan<char> subject) => subject[(subject.LastIndexOf((char)Separator) + 1)..];

    /// <summary>The whitespace Go refuses inside a subject token (IsValidSubject, ValidateMappingDestination).</summary>
    public static bool ContainsWhitespace(ReadOnlySpan<char> token) => ContainsWhitespace<char>(token);

    /// <summary>Go's tokenAt: the one-based <paramref name="index"/>-th token, empty when there is none.</summary>
    public static ReadOnlySpan<byte> TokenAt(ReadOnlySpan<byte> subject, int index) => TokenAt<byte>(subject, index);

    public static ReadOnlySpan<char> TokenAt(ReadOnlySpan<char> subject, int index) => TokenAt<char>(subject, index);

    /// <summary>The string form of <see cref="TokenAt(ReadOnlySpan{char}, int)"/>.</summary>
    public static string TokenAt(string subject, int index) => TokenAt<char>(subject, index).ToString();

    internal static bool IsSingleWildcard<T>(ReadOnlySpan<T> token)
        where T : unmanaged, IBinaryInteger<T> =>
        token.Length == 1 && token[0] == T.CreateTruncating(SingleWildcard);

    internal static bool IsFullWildcard<T>(ReadOnlySpan<T> token)
        where T : unmanaged, IBinaryInteger<T> =>
        token.Length == 1 && token[0] == T.CreateTruncating(FullWildcard);

    internal static bool IsWildcard<T>(ReadOnlySpan<T> token)
        where T : unmanaged, IBinaryInteger<T> =>
        token.Length == 1 && (token[0] == T.CreateTruncating(SingleWildcard) || token[0] == T.CreateTruncating(FullWildcard));

    internal static bool ContainsWhitespace<T>(ReadOnlySpan<T> token)
        where T : unmanaged, IBinaryInteger<T>
    {
        foreach (var c in token)
        {
            if (int.CreateTruncating(c) is ' ' or '\t' or '\n' or '\r' or '\f')
            {
                return true;
            }
        }
        return false;
    }

    private static int Tokenize<T>(ReadOnlySpan<T> subject, Span<Range> tokens, bool rejectEmpty)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (rejectEmpty && subject.IsEmpty)
        {
            return -1;
        }
        var count = 0;
        foreach (var token in new SubjectTokenizer<T>(subject))
        {
            if (count == tokens.Length || (rejectEmpty && token.Start.Value == token.End.Value))
            {
                return -1;
            }
            tokens[count++] = token;
        }
        return count;
    }

    private static ReadOnlySpan<T> TokenAt<T>(ReadOnlySpan<T> subject, int index)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (index < 1)
        {
            return default;
        }
        var at = 0;
        foreach (var token in new SubjectTokenizer<T>(subject))
        {
            if (++at == index)
            {
                return subject[token];
            }
        }
        return default;
    }
}
