using System.Runtime.CompilerServices;

namespace Nats.Server.Protocol;

/// <summary>
/// Parses one client command at a time from the unconsumed part of the receive buffer, in place.
/// It keeps no state between calls: an incomplete command is simply parsed again once more bytes
/// have arrived (cheap: only its control line is re-read), which makes split reads trivially right.
/// Behaviour follows the Go server's parser (server/parser.go): verbs are case-insensitive,
/// arguments are separated by spaces or tabs, a wrong verb byte fails as soon as it arrives.
/// </summary>
internal static class ClientProtocolParser
{
    private const int MaxSizeDigits = 9;

    /// <summary>
    /// Parses the command at the start of <paramref name="buffer"/>.
    /// On <see cref="ParseStatus.Complete"/>, <paramref name="consumed"/> is its full length.
    /// On <see cref="ParseStatus.NeedMoreData"/>, <paramref name="needed"/> is the total length the
    /// command will have when known (payload-bearing commands), else 0.
    /// </summary>
    public static ParseStatus TryParse(
        ReadOnlySpan<byte> buffer,
        in ParserLimits limits,
        out ClientCommand command,
        out int consumed,
        out int needed,
        out ParseError error)
    {
        command = default;
        consumed = 0;
        needed = 0;
        error = ParseError.None;
        if (buffer.IsEmpty)
        {
            return ParseStatus.NeedMoreData;
        }

        var first = buffer[0];
        if (limits.AwaitingAuth && (first | 0x20) != 'c')
        {
            return Fail(ParseError.AuthorizationViolation, out error);
        }

        switch (first | 0x20)
        {
            case 'p':
                if (buffer.Length < 2)
                {
                    return ParseStatus.NeedMoreData;
                }
                switch (buffer[1] | 0x20)
                {
                    case 'u':
                        return ParsePub(buffer, limits, "PUB"u8, isHeaderPub: false, ref command, out consumed, out needed, out error);
                    case 'i':
                        return ParseBareVerb(buffer, "PING"u8, CommandKind.Ping, limits, ref command, out consumed, out error);
                    case 'o':
                        return ParseBareVerb(buffer, "PONG"u8, CommandKind.Pong, limits, ref command, out consumed, out error);
                    default:
                        return Fail(ParseError.UnknownOperation, out error);
                }
            case 'h':
                return ParsePub(buffer, limits, "HPUB"u8, isHeaderPub: true, ref command, out consumed, out needed, out error);
            case 's':
                return ParseArgumentLine(buffer, "SUB"u8, CommandKind.Sub, separatorRequired: true, limits, ref command, out consumed, out error);
            case 'u':
                return ParseArgumentLine(buffer, "UNSUB"u8, CommandKind.Unsub, separatorRequired: true, limits, ref command, out consumed, out error);
            case 'c':
                return ParseArgumentLine(buffer, "CONNECT"u8, CommandKind.Connect, separatorRequired: false, limits, ref command, out consumed, out error);
            case 'i':
                return ParseArgumentLine(buffer, "INFO"u8, CommandKind.Info, separatorRequired: false, limits, ref command, out consumed, out error);
            case '+':
                return ParseBareVerb(buffer, "+OK"u8, CommandKind.Ok, limits, ref command, out consumed, out error);
            case '-':
                return ParseArgumentLine(buffer, "-ERR"u8, CommandKind.Err, separatorRequired: true, limits, ref command, out consumed, out error);
            default:
                return Fail(ParseError.UnknownOperation, out error);
        }
    }

    /// <summary>Checks the verb bytes that have arrived so far; a mismatch fails immediately.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ParseStatus MatchVerb(ReadOnlySpan<byte> buffer, ReadOnlySpan<byte> verb, out ParseError error)
    {
        error = ParseError.None;
        var available = Math.Min(buffer.Length, verb.Length);
        for (var i = 0; i < available; i++)
        {
            var b = buffer[i];
            // Letters compare case-insensitively; '+' and '-' exactly.
            if (b != verb[i] && (b | 0x20) != (verb[i] | 0x20))
            {
                return Fail(ParseError.UnknownOperation, out error);
            }
        }
        return available < verb.Length ? ParseStatus.NeedMoreData : ParseStatus.Complete;
    }

    /// <summary>PING, PONG, +OK: anything after the verb up to the newline is ignored, as in Go.</summary>
    private static ParseStatus ParseBareVerb(ReadOnlySpan<byte> buffer, ReadOnlySpan<byte> verb, CommandKind kind, in ParserLimits limits, ref ClientCommand command, out int consumed, out ParseError error)
    {
        consumed = 0;
        var status = MatchVerb(buffer, verb, out error);
        if (status != ParseStatus.Complete)
        {
            return status;
        }
        var newline = buffer[verb.Length..].IndexOf((byte)'\n');
        // Go drops these bytes as they come; we bound them instead of buffering forever, and by the same
        // measure whether the newline is here yet or not, so the outcome never depends on how reads split.
        if (newline < 0 ? buffer.Length - verb.Length > limits.MaxControlLine : newline > limits.MaxControlLine)
        {
            return Fail(ParseError.MaxControlLine, out error);
        }
        if (newline < 0)
        {
            return ParseStatus.NeedMoreData;
        }
        command.Kind = kind;
        consumed = verb.Length + newline + 1;
        return ParseStatus.Complete;
    }

    /// <summary>Finds the control line after the verb: returns the argument range (without the byte Go drops for a CR).</summary>
    private static ParseStatus ReadControlLine(ReadOnlySpan<byte> buffer, int verbLength, bool separatorRequired, in ParserLimits limits, out Range args, out int lineEnd, out ParseError error)
    {
        args = default;
        lineEnd = 0;
        error = ParseError.None;
        var position = verbLength;
        if (separatorRequired)
        {
            if (buffer.Length <= position)
            {
                return ParseStatus.NeedMoreData;
            }
            if (buffer[position] != ' ' && buffer[position] != '\t')
            {
                return Fail(ParseError.UnknownOperation, out error);
            }
            position++;
        }
        while (position < buffer.Length && (buffer[position] == ' ' || buffer[position] == '\t'))
        {
            position++;
        }
        if (position >= buffer.Length)
        {
            return ParseStatus.NeedMoreData;
        }

        // Go's parser enters its argument state on the first byte after the spaces, whatever that byte is, so it never
        // ends the line; a CR seen after it drops the line's last byte (c.drop), trailing or not.
        var rest = buffer[(position + 1)..];
        var newline = rest.IndexOf((byte)'\n');
        if (newline < 0)
        {
            if (buffer.Length - position - (rest.Contains((byte)'\r') ? 1 : 0) > limits.MaxControlLine)
            {
                return Fail(ParseError.MaxControlLine, out error);
            }
            return ParseStatus.NeedMoreData;
        }
        var end = position + 1 + newline;
        lineEnd = end + 1;
        var drop = newline > 0 && (rest[newline - 1] == '\r' || rest[..newline].Contains((byte)'\r'));
        var argEnd = drop ? end - 1 : end;
        if (argEnd - position > limits.MaxControlLine)
        {
            return Fail(ParseError.MaxControlLine, out error);
        }
        args = new Range(position, argEnd);
        return ParseStatus.Complete;
    }

    private static ParseStatus ParseArgumentLine(ReadOnlySpan<byte> buffer, ReadOnlySpan<byte> verb, CommandKind kind, bool separatorRequired, in ParserLimits limits, ref ClientCommand command, out int consumed, out ParseError error)
    {
        consumed = 0;
        var status = MatchVerb(buffer, verb, out error);
        if (status != ParseStatus.Complete)
        {
            return status;
        }
        status = ReadControlLine(buffer, verb.Length, separatorRequired, limits, out var args, out var lineEnd, out error);
        if (status != ParseStatus.Complete)
        {
            return status;
        }

        command.Kind = kind;
        command.ControlArgs = args;
        consumed = lineEnd;
        switch (kind)
        {
            case CommandKind.Sub:
                {
                    Span<Range> parts = stackalloc Range[4];
                    var count = SplitArguments(buffer, args, parts, includeLineBreaks: true);
                    if (count == 2)
                    {
                        command.Subject = parts[0];
                        command.Sid = parts[1];
                    }
                    else if (count == 3)
                    {
                        command.Subject = parts[0];
                        command.Queue = parts[1];
                        command.Sid = parts[2];
                    }
                    else
                    {
                        return Fail(ParseError.ProtocolViolation, out error);
                    }
                    break;
                }
            case CommandKind.Unsub:
                {
                    Span<Range> parts = stackalloc Range[3];
                    var count = SplitArguments(buffer, args, parts, includeLineBreaks: true);
                    if (count is < 1 or > 2)
                    {
                        return Fail(ParseError.ProtocolViolation, out error);
                    }
                    command.Sid = parts[0];
                    command.UnsubMax = -1;
                    if (count == 2)
                    {
                        command.UnsubHasMax = true;
                        command.UnsubMax = ParseSize(buffer[parts[1]]);
                    }
                    break;
                }
            default:
                command.Argument = args;
                break;
        }
        return ParseStatus.Complete;
    }

    private static ParseStatus ParsePub(ReadOnlySpan<byte> buffer, in ParserLimits limits, ReadOnlySpan<byte> verb, bool isHeaderPub, ref ClientCommand command, out int consumed, out int needed, out ParseError error)
    {
        consumed = 0;
        needed = 0;
        var status = MatchVerb(buffer, verb, out error);
        if (status != ParseStatus.Complete)
        {
            return status;
        }
        status = ReadControlLine(buffer, verb.Length, separatorRequired: true, limits, out var args, out var lineEnd, out error);
        if (status != ParseStatus.Complete)
        {
            return status;
        }

        Span<Range> parts = stackalloc Range[5];
        var count = SplitArguments(buffer, args, parts, includeLineBreaks: false);
        command.Kind = isHeaderPub ? CommandKind.HPub : CommandKind.Pub;
        command.ControlArgs = args;
        command.HeaderSize = -1;
        int size;
        if (!isHeaderPub)
        {
            if (count is < 2 or > 3)
            {
                return Fail(ParseError.ProtocolViolation, out error);
            }
            command.Subject = parts[0];
            if (count == 3)
            {
                command.Reply = parts[1];
            }
            size = ParseSize(buffer[parts[count - 1]]);
            command.SizeToken = parts[count - 1];
            if (size < 0)
            {
                return Fail(ParseError.ProtocolViolation, out error);
            }
        }
        else
        {
            if (!limits.HeadersEnabled || count is < 3 or > 4)
            {
                return Fail(ParseError.ProtocolViolation, out error);
            }
            command.Subject = parts[0];
            if (count == 4)
            {
                command.Reply = parts[1];
            }
            var headerSize = ParseSize(buffer[parts[count - 2]]);
            size = ParseSize(buffer[parts[count - 1]]);
            command.HeaderSizeToken = parts[count - 2];
            command.SizeToken = parts[count - 1];
            if (headerSize < 0 || size < 0 || headerSize > size)
            {
                return Fail(ParseError.ProtocolViolation, out error);
            }
            command.HeaderSize = headerSize;
        }

        // Checked on the control line alone, so an oversize publish is refused before its payload arrives.
        if (size > limits.MaxPayload)
        {
            return Fail(ParseError.MaxPayload, out error);
        }

        command.PayloadStart = lineEnd;
        command.PayloadSize = size;
        var total = lineEnd + size + 2;
        if (buffer.Length < total)
        {
            // A wrong terminator is reported as soon as its first byte is here, like Go.
            if (buffer.Length > lineEnd + size && buffer[lineEnd + size] != '\r')
            {
                return Fail(ParseError.UnknownOperation, out error);
            }
            needed = total;
            return ParseStatus.NeedMoreData;
        }
        if (buffer[lineEnd + size] != '\r' || buffer[lineEnd + size + 1] != '\n')
        {
            return Fail(ParseError.UnknownOperation, out error);
        }
        consumed = total;
        return ParseStatus.Complete;
    }

    /// <summary>
    /// Splits on spaces and tabs (PUB/HPUB, like Go's processPub) or also on CR/LF (SUB/UNSUB, like
    /// Go's splitArg). Returns the number of arguments, or parts.Length + 1 when there are too many.
    /// </summary>
    private static int SplitArguments(ReadOnlySpan<byte> buffer, Range args, Span<Range> parts, bool includeLineBreaks)
    {
        var (offset, length) = args.GetOffsetAndLength(buffer.Length);
        var count = 0;
        var start = -1;
        for (var i = offset; i < offset + length; i++)
        {
            var b = buffer[i];
            var isSeparator = b == ' ' || b == '\t' || (includeLineBreaks && (b == '\r' || b == '\n'));
            if (isSeparator)
            {
                if (start >= 0)
                {
                    if (count == parts.Length)
                    {
                        return parts.Length + 1;
                    }
                    parts[count++] = new Range(start, i);
                    start = -1;
                }
            }
            else if (start < 0)
            {
                start = i;
            }
        }
        if (start >= 0)
        {
            if (count == parts.Length)
            {
                return parts.Length + 1;
            }
            parts[count++] = new Range(start, offset + length);
        }
        return count;
    }

    /// <summary>Go's parseSize: 1-9 ASCII digits, otherwise -1.</summary>
    public static int ParseSize(ReadOnlySpan<byte> digits)
    {
        if (digits.IsEmpty || digits.Length > MaxSizeDigits)
        {
            return -1;
        }
        var value = 0;
        foreach (var d in digits)
        {
            if (d < '0' || d > '9')
            {
                return -1;
            }
            value = value * 10 + (d - '0');
        }
        return value;
    }

    private static ParseStatus Fail(ParseError kind, out ParseError error)
    {
        error = kind;
        return ParseStatus.Error;
    }
}

/// <summary>The per-connection settings the parser enforces.</summary>
internal readonly record struct ParserLimits(int MaxControlLine, int MaxPayload, bool HeadersEnabled, bool AwaitingAuth);
