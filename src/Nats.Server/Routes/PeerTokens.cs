using System.Buffers.Text;

namespace Nats.Server.Routes;

/// <summary>The tokenising every peer protocol parser shares (routes and leaf connections): case-insensitive verbs,
/// arguments split on runs of spaces and tabs as Go's splitArg, sizes as Go's parseSize.</summary>
internal static class PeerTokens
{
    public static bool Is(ReadOnlySpan<byte> op, ReadOnlySpan<byte> name)
    {
        if (op.Length != name.Length)
        {
            return false;
        }
        for (var i = 0; i < op.Length; i++)
        {
            if ((op[i] | 0x20) != (name[i] | 0x20))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>Splits on runs of spaces and tabs, as every Go parser accepts; returns the count (MaxArgs+1 when too many).</summary>
    public static int Split(ReadOnlySpan<byte> text, Span<Range> args)
    {
        var count = 0;
        var i = 0;
        while (i < text.Length)
        {
            while (i < text.Length && text[i] is (byte)' ' or (byte)'\t')
            {
                i++;
            }
            if (i == text.Length)
            {
                break;
            }
            var startIndex = i;
            while (i < text.Length && text[i] is not ((byte)' ' or (byte)'\t'))
            {
                i++;
            }
            if (count == args.Length)
            {
                return count + 1;
            }
            args[count++] = startIndex..i;
        }
        return count;
    }

    /// <summary>The first argument (the origin cluster of LS+/LMSG).</summary>
    public static ReadOnlySpan<byte> FirstToken(ReadOnlySpan<byte> text)
    {
        text = text.TrimStart(" \t"u8);
        var end = text.IndexOfAny((byte)' ', (byte)'\t');
        return end < 0 ? text : text[..end];
    }

    /// <summary>The arguments after the first one (the origin cluster of LS+/LMSG).</summary>
    public static ReadOnlySpan<byte> SkipToken(ReadOnlySpan<byte> text)
    {
        text = text.TrimStart(" \t"u8);
        var end = text.IndexOfAny((byte)' ', (byte)'\t');
        return end < 0 ? default : text[(end + 1)..];
    }

    public static bool TryParseSize(ReadOnlySpan<byte> text, out int value) =>
        Utf8Parser.TryParse(text, out value, out var consumed) && consumed == text.Length && value >= 0;

    /// <summary>
    /// The arguments of an account-carrying message (RMSG/HMSG on routes and gateways) after the verb:
    /// <c>acc subject [reply | + reply q… | | q…] [hdr] size</c>. Null on success, else Go's error text.
    /// <paramref name="reply"/> and <paramref name="queues"/> are ranges of <paramref name="rest"/> (empty when absent).
    /// </summary>
    public static string? ParseRoutedArgs(ReadOnlySpan<byte> rest, Span<Range> args, bool headers, out int size, out int headerSize,
        out Range reply, out Range queues)
    {
        reply = default;
        queues = default;
        headerSize = -1;
        size = 0;
        var count = Split(rest, args);
        var sizeArgs = headers ? 2 : 1;
        if (count < 2 + sizeArgs || count > args.Length || !TryParseSize(rest[args[count - 1]], out size))
        {
            return "Processing Routed Message Args";
        }
        if (headers && (!TryParseSize(rest[args[count - 2]], out headerSize) || headerSize > size))
        {
            return "Processing Routed Message Args";
        }
        var middle = count - 2 - sizeArgs;
        if (middle == 1)
        {
            reply = args[2];
        }
        else if (middle > 1)
        {
            var indicator = rest[args[2]];
            int firstQueue;
            if (indicator is [(byte)'+'])
            {
                reply = args[3];
                firstQueue = 4;
            }
            else if (indicator is [(byte)'|'])
            {
                firstQueue = 3;
            }
            else
            {
                return "Bad or Missing Reply Indicator";
            }
            var lastQueue = count - 1 - sizeArgs;
            if (firstQueue <= lastQueue)
            {
                queues = args[firstQueue].Start..args[lastQueue].End;
            }
        }
        return null;
    }
}
