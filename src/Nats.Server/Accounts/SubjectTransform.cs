using System.Text;
using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts;

/// <summary>
/// Rewrites a literal subject matched by a wildcard source into a destination, token by token: the
/// i-th '*' of the destination receives the token the i-th '*' of the source matched, and a trailing
/// '>' carries the rest of the subject (Go's transform for import renaming, without mapping functions).
/// </summary>
internal sealed class SubjectTransform
{
    private const int MaxTokens = 64;

    // Per destination token: a literal, or the index of the source token whose value it takes.
    private readonly byte[]?[] _literals;
    private readonly int[] _sourceIndexes;
    private readonly int _sourceFullWildcard;

    private SubjectTransform(byte[]?[] literals, int[] sourceIndexes, int sourceFullWildcard)
    {
        _literals = literals;
        _sourceIndexes = sourceIndexes;
        _sourceFullWildcard = sourceFullWildcard;
    }

    /// <summary>
    /// Go's newTransform(src, transformTokenize(dest)) checks; null with Go's reason when the two do not fit.
    /// <paramref name="pairWithSource"/> false validates the reverse direction (service imports check
    /// the exporter's subject against the local one) while still producing source → destination.
    /// </summary>
    public static SubjectTransform? Create(string source, string destination, out string? error, bool checkReverse = false)
    {
        error = null;
        var sourceTokens = source.Split('.');
        var destinationTokens = destination.Split('.');
        if (!SubjectValidation.IsValidSubject(Encoding.UTF8.GetBytes(source)) || !SubjectValidation.IsValidSubject(Encoding.UTF8.GetBytes(destination))
            || (sourceTokens[^1] == ">") != (destinationTokens[^1] == ">"))
        {
            error = "invalid subject";
            return null;
        }
        var sourceWildcards = Wildcards(sourceTokens);
        var destinationWildcards = Wildcards(destinationTokens);
        var (checkedSource, checkedDestination) = checkReverse ? (destinationWildcards, sourceWildcards) : (sourceWildcards, destinationWildcards);
        var checkedDestinationTokens = checkReverse ? sourceTokens : destinationTokens;
        if (checkedDestination.Count > checkedSource.Count)
        {
            var index = checkedSource.Count + 1;
            error = $"invalid mapping destination: wildcard index out of range in ${index}: [{index}]";
            return null;
        }
        if (checkedDestination.Count < checkedSource.Count)
        {
            var n = 0;
            var tokenized = string.Join('.', checkedDestinationTokens.Select(t => t == "*" ? "$" + ++n : t));
            error = $"invalid mapping destination: not using all of the token wildcard(s) in {tokenized}";
            return null;
        }
        var literals = new byte[]?[destinationTokens.Length];
        var indexes = new int[destinationTokens.Length];
        var next = 0;
        for (var i = 0; i < destinationTokens.Length; i++)
        {
            var token = destinationTokens[i];
            if (token == "*")
            {
                indexes[i] = sourceWildcards[next++];
            }
            else if (token == ">")
            {
                indexes[i] = -2;
            }
            else
            {
                literals[i] = Encoding.UTF8.GetBytes(token);
                indexes[i] = -1;
            }
        }
        var fullWildcard = sourceTokens[^1] == ">" ? sourceTokens.Length - 1 : -1;
        return new SubjectTransform(literals, indexes, fullWildcard);
    }

    private static List<int> Wildcards(string[] tokens)
    {
        var positions = new List<int>();
        for (var i = 0; i < tokens.Length; i++)
        {
            if (tokens[i] == "*")
            {
                positions.Add(i);
            }
        }
        return positions;
    }

    /// <summary>An upper bound of the transformed length of a subject of <paramref name="subjectLength"/> bytes.</summary>
    public int MaxLength(int subjectLength)
    {
        var length = 0;
        foreach (var literal in _literals)
        {
            length += (literal?.Length ?? 0) + 1;
        }
        return length + subjectLength * 2 + 1;
    }

    /// <summary>Writes the transformed subject; -1 when the subject has more tokens than handled.</summary>
    public int Apply(ReadOnlySpan<byte> subject, Span<byte> output)
    {
        Span<int> starts = stackalloc int[MaxTokens];
        Span<int> lengths = stackalloc int[MaxTokens];
        var count = 0;
        var start = 0;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i == subject.Length || subject[i] == (byte)'.')
            {
                if (count == MaxTokens)
                {
                    return -1;
                }
                starts[count] = start;
                lengths[count] = i - start;
                count++;
                start = i + 1;
            }
        }
        var position = 0;
        for (var i = 0; i < _literals.Length; i++)
        {
            if (i > 0)
            {
                output[position++] = (byte)'.';
            }
            ReadOnlySpan<byte> piece;
            var index = _sourceIndexes[i];
            if (index == -1)
            {
                piece = _literals[i];
            }
            else if (index == -2)
            {
                if (_sourceFullWildcard < 0 || _sourceFullWildcard >= count)
                {
                    return -1;
                }
                piece = subject[starts[_sourceFullWildcard]..];
            }
            else
            {
                if (index >= count)
                {
                    return -1;
                }
                piece = subject.Slice(starts[index], lengths[index]);
            }
            piece.CopyTo(output[position..]);
            position += piece.Length;
        }
        return position;
    }
}
