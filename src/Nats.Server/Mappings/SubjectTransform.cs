using System.Buffers.Text;
using System.Text;
using Nats.Subjects;

namespace Nats.Server.Mappings;

/// <summary>
/// A compiled source-to-destination subject transform (Go 2.9.10's transform in accounts.go). It is
/// built once when a mapping is added and applied to published subjects that matched the source,
/// writing the new subject into a caller-owned buffer so the publish path does not allocate.
/// </summary>
internal sealed class SubjectTransform
{
    private readonly Part[]? _parts;
    private readonly byte[] _destinationBytes;
    private readonly int _sourceTokenCount;
    private readonly bool _endsWithFullWildcard;
    private readonly int _literalBytes;
    private readonly int _functionParts;

    private SubjectTransform(string source, string destination, Part[]? parts, int sourceTokenCount)
    {
        Source = source;
        Destination = destination;
        _parts = parts;
        _destinationBytes = Encoding.UTF8.GetBytes(destination);
        _sourceTokenCount = sourceTokenCount;
        _endsWithFullWildcard = SubjectTokens.IsFullWildcard(SubjectTokens.Last(destination));
        if (parts is not null)
        {
            foreach (var part in parts)
            {
                _literalBytes += part.Literal.Length;
                _functionParts += part.Kind == TransformKind.Literal ? 0 : 1;
            }
        }
    }

    public string Source { get; }

    public string Destination { get; }

    /// <summary>A literal source maps to its destination text verbatim, as in Go (no tokens are read).</summary>
    public bool IsLiteral => _parts is null;

    /// <summary>Go's transformTokenize: the i-th '*' token becomes "$i" ("foo.*.*" becomes "foo.$1.$2").</summary>
    public static string TransformTokenize(string[] tokens)
    {
        var ordinal = 0;
        return string.Join('.', tokens.Select(t => SubjectTokens.IsSingleWildcard(t) ? "$" + ++ordinal : t));
    }

    /// <summary>Go's newTransform: both subjects valid, '>' on both sides or neither, no '*' in the destination, every source wildcard used.</summary>
    public static SubjectTransform Create(string source, string destination)
    {
        if (!SubjectRules.Info(source, out var sourceTokens, out var sourceWildcards, out var sourceFull)
            || !SubjectRules.Info(destination, out var destinationTokens, out var destinationWildcards, out var destinationFull)
            || destinationWildcards > 0 || sourceFull != destinationFull)
        {
            throw new MappingException(MappingErrors.BadSubject);
        }
        if (sourceWildcards == 0 && !sourceFull)
        {
            return new SubjectTransform(source, destination, null, sourceTokens.Length);
        }

        // Wildcard ordinal (1-based) -> source token position. Go reads a missing ordinal ($0, $-1)
        // from its map as position 0, so those pick the first source token.
        var positions = new List<int>();
        for (var i = 0; i < sourceTokens.Length; i++)
        {
            if (SubjectTokens.IsSingleWildcard(sourceTokens[i]))
            {
                positions.Add(i);
            }
        }
        var parts = new Part[destinationTokens.Length];
        var placeholders = 0;
        for (var i = 0; i < destinationTokens.Length; i++)
        {
            var token = destinationTokens[i];
            var parsed = DestinationToken.Parse(token);
            if (parsed.Kind == TransformKind.Literal)
            {
                parts[i] = new Part(TransformKind.Literal, Encoding.UTF8.GetBytes(token), [], 0, []);
                continue;
            }
            placeholders++;
            var indexes = new int[parsed.WildcardIndexes.Length];
            for (var j = 0; j < indexes.Length; j++)
            {
                var ordinal = parsed.WildcardIndexes[j];
                if (ordinal > sourceWildcards)
                {
                    throw MappingErrors.InToken(MappingErrors.WildcardIndexOutOfRange, $"{token}: [{ordinal}]");
                }
                indexes[j] = ordinal >= 1 ? positions[(int)ordinal - 1] : 0;
            }
            parts[i] = new Part(parsed.Kind, [], indexes, parsed.IntArgument, Encoding.UTF8.GetBytes(parsed.StringArgument));
        }
        if (placeholders < sourceWildcards)
        {
            throw MappingErrors.InToken(MappingErrors.NotUsingAllWildcards, destination);
        }
        return new SubjectTransform(source, destination, parts, sourceTokens.Length);
    }

    /// <summary>
    /// Writes the destination for <paramref name="subject"/> (already matched against the source;
    /// <paramref name="tokens"/> are its token ranges) into <paramref name="buffer"/>, growing it if needed.
    /// Returns the length written.
    /// </summary>
    public int Apply(ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, ref byte[] buffer)
    {
        if (_parts is null)
        {
            EnsureCapacity(ref buffer, _destinationBytes.Length);
            _destinationBytes.CopyTo(buffer, 0);
            return _destinationBytes.Length;
        }
        // Every function writes at most twice its token's length (or an 11-character number), so this
        // bound lets the writers below index the span without further checks.
        var bound = _literalBytes + _parts.Length + _functionParts * (2 * subject.Length + 12) + subject.Length + 1;
        EnsureCapacity(ref buffer, bound);
        var output = buffer.AsSpan();
        var length = 0;
        var last = _parts.Length - 1;
        for (var i = 0; i < _parts.Length; i++)
        {
            var part = _parts[i];
            if (part.Kind == TransformKind.Literal)
            {
                if (SubjectTokens.IsFullWildcard(part.Literal))
                {
                    break;
                }
                Append(output, ref length, part.Literal);
            }
            else
            {
                WriteFunction(part, subject, tokens, output, ref length);
            }
            if (i < last)
            {
                output[length++] = (byte)'.';
            }
        }
        if (_endsWithFullWildcard)
        {
            // The tokens matched by '>' are contiguous in the published subject.
            Append(output, ref length, subject[tokens[_sourceTokenCount - 1].Start..]);
        }
        return length;
    }

    /// <summary>Convenience for tests and tools: tokenises and applies (the subject must match the source).</summary>
    public string Apply(string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        var tokens = SubjectTokens.Tokenize(bytes);
        var buffer = Array.Empty<byte>();
        var length = Apply(bytes, tokens, ref buffer);
        return Encoding.UTF8.GetString(buffer, 0, length);
    }

    private static void WriteFunction(in Part part, ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, Span<byte> output, ref int length)
    {
        if (part.Kind == TransformKind.Partition)
        {
            WritePartition(part, subject, tokens, output, ref length);
            return;
        }
        var token = subject[tokens[part.SourceTokens[0]]];
        var size = part.IntArgument;
        switch (part.Kind)
        {
            case TransformKind.Wildcard:
                Append(output, ref length, token);
                break;
            case TransformKind.SplitFromLeft:
            case TransformKind.SplitFromRight:
                if (size > 0 && size < token.Length)
                {
                    var at = part.Kind == TransformKind.SplitFromLeft ? size : token.Length - size;
                    Append(output, ref length, token[..at]);
                    output[length++] = (byte)'.';
                    Append(output, ref length, token[at..]);
                }
                else
                {
                    Append(output, ref length, token);
                }
                break;
            case TransformKind.SliceFromLeft:
                if (size > 0 && size < token.Length)
                {
                    // Whole slices from the left; a shorter remainder becomes the last token.
                    for (var at = 0; at < token.Length; at += size)
                    {
                        if (at != 0)
                        {
                            output[length++] = (byte)'.';
                        }
                        Append(output, ref length, token[at..Math.Min(at + size, token.Length)]);
                    }
                }
                else
                {
                    Append(output, ref length, token);
                }
                break;
            case TransformKind.SliceFromRight:
                if (size > 0 && size < token.Length)
                {
                    // A shorter remainder becomes the first token, then whole slices.
                    var remainder = token.Length % size;
                    if (remainder > 0)
                    {
                        Append(output, ref length, token[..remainder]);
                        output[length++] = (byte)'.';
                    }
                    for (var at = remainder; at < token.Length; at += size)
                    {
                        Append(output, ref length, token[at..(at + size)]);
                        if (at + size < token.Length)
                        {
                            output[length++] = (byte)'.';
                        }
                    }
                }
                else
                {
                    Append(output, ref length, token);
                }
                break;
            case TransformKind.Split:
                WriteSplit(token, part.StringArgument, output, ref length);
                break;
        }
    }

    private static void WritePartition(in Part part, ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, Span<byte> output, ref int length)
    {
        // FNV-1a 32 over the selected tokens concatenated without separators, as Go hashes them.
        var hash = 2166136261u;
        foreach (var index in part.SourceTokens)
        {
            foreach (var b in subject[tokens[index]])
            {
                hash = (hash ^ b) * 16777619u;
            }
        }
        // Go converts the partition count to uint32 (a negative count wraps). A zero count makes Go
        // panic; we write the unreduced hash instead of failing the publish.
        var buckets = unchecked((uint)part.IntArgument);
        var value = buckets == 0 ? hash : hash % buckets;
        Utf8Formatter.TryFormat(value, output[length..], out var written);
        length += written;
    }

    /// <summary>
    /// Go's split: the pieces of strings.Split(token, delimiter) with empty pieces dropped, joined by '.'
    /// except that no separator follows an empty first piece (so "--a" split on "-" gives ".a", as in Go).
    /// An empty delimiter splits into UTF-8 characters.
    /// </summary>
    private static void WriteSplit(ReadOnlySpan<byte> token, ReadOnlySpan<byte> delimiter, Span<byte> output, ref int length)
    {
        if (delimiter.IsEmpty)
        {
            for (var at = 0; at < token.Length;)
            {
                var status = Rune.DecodeFromUtf8(token[at..], out _, out var consumed);
                var size = status == System.Buffers.OperationStatus.Done ? consumed : 1;
                if (at != 0)
                {
                    output[length++] = (byte)'.';
                }
                Append(output, ref length, token.Slice(at, size));
                at += size;
            }
            return;
        }
        var rest = token;
        var index = 0;
        var firstEmpty = false;
        while (true)
        {
            var found = rest.IndexOf(delimiter);
            var piece = found < 0 ? rest : rest[..found];
            if (index == 0)
            {
                firstEmpty = piece.IsEmpty;
            }
            else if (!piece.IsEmpty && !(index == 1 && firstEmpty))
            {
                output[length++] = (byte)'.';
            }
            Append(output, ref length, piece);
            if (found < 0)
            {
                return;
            }
            rest = rest[(found + delimiter.Length)..];
            index++;
        }
    }

    private static void Append(Span<byte> output, ref int length, ReadOnlySpan<byte> bytes)
    {
        bytes.CopyTo(output[length..]);
        length += bytes.Length;
    }

    private static void EnsureCapacity(ref byte[] buffer, int needed)
    {
        if (buffer.Length < needed)
        {
            buffer = new byte[Math.Max(needed, Math.Max(64, buffer.Length * 2))];
        }
    }

    /// <summary>One destination token: literal bytes or a function over source token positions.</summary>
    private readonly record struct Part(TransformKind Kind, byte[] Literal, int[] SourceTokens, int IntArgument, byte[] StringArgument);
}
