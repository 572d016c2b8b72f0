using System.Text.RegularExpressions;
using Nats.Subjects;

namespace Nats.Server.Mappings;

internal enum TransformKind : byte
{
    Literal,
    Wildcard,
    Partition,
    SplitFromLeft,
    SplitFromRight,
    SliceFromLeft,
    SliceFromRight,
    Split,
}

/// <summary>One destination token as Go's indexPlaceHolders reads it: a literal, $n, or a {{function(...)}}.</summary>
internal readonly record struct DestinationToken(TransformKind Kind, long[] WildcardIndexes, int IntArgument, string StringArgument)
{
    // Go's regexes, unanchored, with RE2's \s spelled out (.NET's \s also matches Unicode spaces).
    private const string Ws = "[\\t\\n\\f\\r ]*";
    private static readonly Regex WildcardFunction = Function("[wW]ildcard");
    private static readonly Regex PartitionFunction = Function("[pP]artition");
    private static readonly Regex SplitFromLeftFunction = Function("[sS]plit[fF]rom[lL]eft");
    private static readonly Regex SplitFromRightFunction = Function("[sS]plit[fF]rom[rR]ight");
    private static readonly Regex SliceFromLeftFunction = Function("[sS]lice[fF]rom[lL]eft");
    private static readonly Regex SliceFromRightFunction = Function("[sS]lice[fF]rom[rR]ight");
    private static readonly Regex SplitFunction = Function("[sS]plit");
    private static readonly Regex CommaSeparator = new(",[\\t\\n\\f\\r ]*", RegexOptions.CultureInvariant);

    private static readonly Regex[] AllFunctions =
    [
        PartitionFunction, WildcardFunction, SplitFromLeftFunction, SplitFromRightFunction,
        SliceFromLeftFunction, SliceFromRightFunction, SplitFunction,
    ];

    public static readonly DestinationToken Literal = new(TransformKind.Literal, [], -1, "");

    private static Regex Function(string name) =>
        new("\\{\\{" + Ws + name + Ws + "\\((.*)\\)" + Ws + "\\}\\}", RegexOptions.CultureInvariant);

    private static bool IsMustache(string token) =>
        token.Length > 4 && token.StartsWith("{{", StringComparison.Ordinal) && token.EndsWith("}}", StringComparison.Ordinal);

    /// <summary>Go's ValidateMappingDestination: run on every destination before it is compiled.</summary>
    public static void Validate(string destination)
    {
        var sawFullWildcard = false;
        foreach (var token in SubjectTokens.Split(destination))
        {
            if (token.Length == 0 || sawFullWildcard)
            {
                throw MappingErrors.InToken(MappingErrors.InvalidDestinationSubject, token);
            }
            if (IsMustache(token))
            {
                if (!AllFunctions.Any(f => f.IsMatch(token)))
                {
                    throw MappingErrors.InToken(MappingErrors.UnknownFunction, token);
                }
                continue;
            }
            if (SubjectTokens.IsFullWildcard(token))
            {
                sawFullWildcard = true;
            }
            else if (SubjectTokens.ContainsWhitespace(token))
            {
                // Go returns the bare error here, without the token.
                throw new MappingException(MappingErrors.InvalidDestinationSubject);
            }
        }
    }

    /// <summary>Go's indexPlaceHolders.</summary>
    public static DestinationToken Parse(string token)
    {
        if (token.Length <= 1)
        {
            return Literal;
        }
        if (token[0] == '$')
        {
            // Other features use tokens starting with '$', so "$x" that is not a number stays literal.
            return GoAtoi(token[1..], out var index) ? new(TransformKind.Wildcard, [index], -1, "") : Literal;
        }
        if (!IsMustache(token))
        {
            return Literal;
        }

        if (Arguments(WildcardFunction, token) is { } args)
        {
            if (args.Length == 1 && args[0].Length == 0)
            {
                throw MappingErrors.InToken(MappingErrors.NotEnoughArguments, token);
            }
            if (args.Length > 1)
            {
                throw MappingErrors.InToken(MappingErrors.TooManyArguments, token);
            }
            return new(TransformKind.Wildcard, [ParseInt(args[0], token)], -1, "");
        }
        if (Arguments(PartitionFunction, token) is { } partition)
        {
            if (partition.Length < 2)
            {
                throw MappingErrors.InToken(MappingErrors.NotEnoughArguments, token);
            }
            var count = ParseInt(partition[0], token);
            var indexes = partition[1..].Select(a => ParseInt(a, token)).ToArray();
            return new(TransformKind.Partition, indexes, unchecked((int)count), "");
        }
        if (Arguments(SplitFromLeftFunction, token) is { } sfl)
        {
            return IndexAndInt(sfl, token, TransformKind.SplitFromLeft);
        }
        if (Arguments(SplitFromRightFunction, token) is { } sfr)
        {
            return IndexAndInt(sfr, token, TransformKind.SplitFromRight);
        }
        if (Arguments(SliceFromLeftFunction, token) is { } slfl)
        {
            return IndexAndInt(slfl, token, TransformKind.SliceFromLeft);
        }
        if (Arguments(SliceFromRightFunction, token) is { } slfr)
        {
            return IndexAndInt(slfr, token, TransformKind.SliceFromRight);
        }
        if (Arguments(SplitFunction, token) is { } split)
        {
            CheckTwoArguments(split, token);
            var index = ParseInt(split[0], token);
            if (split[1].Contains(' ') || split[1].Contains('.'))
            {
                throw MappingErrors.InToken(MappingErrors.InvalidArgument, token);
            }
            return new(TransformKind.Split, [index], -1, split[1]);
        }
        throw MappingErrors.InToken(MappingErrors.UnknownFunction, token);
    }

    private static DestinationToken IndexAndInt(string[] args, string token, TransformKind kind)
    {
        CheckTwoArguments(args, token);
        var index = ParseInt(args[0], token);
        var value = ParseInt(args[1], token);
        return new(kind, [index], unchecked((int)value), "");
    }

    private static void CheckTwoArguments(string[] args, string token)
    {
        if (args.Length < 2)
        {
            throw MappingErrors.InToken(MappingErrors.NotEnoughArguments, token);
        }
        if (args.Length > 2)
        {
            throw MappingErrors.InToken(MappingErrors.TooManyArguments, token);
        }
    }

    private static string[]? Arguments(Regex function, string token)
    {
        var match = function.Match(token);
        return match.Success ? CommaSeparator.Split(match.Groups[1].Value) : null;
    }

    private static long ParseInt(string text, string token) =>
        GoAtoi(text.Trim(' '), out var value) ? value : throw MappingErrors.InToken(MappingErrors.InvalidArgument, token);

    /// <summary>strconv.Atoi on a 64-bit platform: optional sign, decimal digits only, int64 range.</summary>
    internal static bool GoAtoi(string text, out long value)
    {
        value = 0;
        var span = text.AsSpan();
        var negative = false;
        if (span.Length > 0 && (span[0] == '+' || span[0] == '-'))
        {
            negative = span[0] == '-';
            span = span[1..];
        }
        if (span.IsEmpty)
        {
            return false;
        }
        ulong magnitude = 0;
        foreach (var c in span)
        {
            if (c is < '0' or > '9')
            {
                return false;
            }
            if (magnitude > (ulong.MaxValue - 9) / 10)
            {
                return false;
            }
            magnitude = magnitude * 10 + (ulong)(c - '0');
        }
        if (negative ? magnitude > (ulong)long.MaxValue + 1 : magnitude > long.MaxValue)
        {
            return false;
        }
        value = negative ? unchecked(-(long)magnitude) : (long)magnitude;
        return true;
    }
}
