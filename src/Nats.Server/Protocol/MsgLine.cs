using System.Buffers.Text;

namespace Nats.Server.Protocol;

/// <summary>
/// The one writer of the server-to-client MSG and HMSG control lines:
/// <c>MSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;size&gt;\r\n</c> and
/// <c>HMSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;header size&gt; &lt;total size&gt;\r\n</c>.
/// A publish writes the line once, split around the sid (the only part that differs per
/// subscriber), so every client receiver copies prefix + its sid + suffix.
/// </summary>
internal static class MsgLine
{
    /// <summary>Room needed besides the variable parts ("HMSG ", spaces, CRLF).</summary>
    private const int FixedOverhead = 16;

    /// <summary>Room for a line of these parts, without the sid.</summary>
    public static int MaxLength(int subject, int reply, int headerSizeToken, int sizeToken) =>
        subject + reply + headerSizeToken + sizeToken + FixedOverhead;

    /// <summary>Room for a line whose sizes are given as numbers (at most 11 digits each).</summary>
    public static int MaxLength(int subject, int reply, int sid) => subject + reply + sid + 2 * 11 + FixedOverhead;

    /// <summary>
    /// Writes the line without its sid; the sid goes at <paramref name="prefixLength"/>. A reply is
    /// written when non-empty, or empty when <paramref name="replySet"/> (Go's internal sender always
    /// sets one, which leaves two spaces before the size). <paramref name="headerSizeToken"/> empty
    /// means a plain MSG. Returns the bytes written.
    /// </summary>
    public static int WriteSplit(Span<byte> span, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, bool replySet,
        ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, out int prefixLength)
    {
        int position;
        if (!headerSizeToken.IsEmpty)
        {
            "HMSG "u8.CopyTo(span);
            position = 5;
        }
        else
        {
            "MSG "u8.CopyTo(span);
            position = 4;
        }
        subject.CopyTo(span[position..]);
        position += subject.Length;
        span[position++] = (byte)' ';
        prefixLength = position;
        if (replySet || !reply.IsEmpty)
        {
            span[position++] = (byte)' ';
            reply.CopyTo(span[position..]);
            position += reply.Length;
        }
        if (!headerSizeToken.IsEmpty)
        {
            span[position++] = (byte)' ';
            headerSizeToken.CopyTo(span[position..]);
            position += headerSizeToken.Length;
        }
        span[position++] = (byte)' ';
        sizeToken.CopyTo(span[position..]);
        position += sizeToken.Length;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        return position;
    }

    /// <summary>As <see cref="WriteSplit(Span{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, bool, ReadOnlySpan{byte}, ReadOnlySpan{byte}, out int)"/>,
    /// with the sizes as numbers; <paramref name="headerSize"/> below 1 means a plain MSG.</summary>
    public static int WriteSplit(Span<byte> span, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, bool replySet,
        int headerSize, int totalSize, out int prefixLength)
    {
        Span<byte> headerSizeToken = stackalloc byte[11];
        Span<byte> sizeToken = stackalloc byte[11];
        var headerSizeLength = 0;
        if (headerSize > 0)
        {
            Utf8Formatter.TryFormat(headerSize, headerSizeToken, out headerSizeLength);
        }
        Utf8Formatter.TryFormat(totalSize, sizeToken, out var sizeLength);
        return WriteSplit(span, subject, reply, replySet, headerSizeToken[..headerSizeLength], sizeToken[..sizeLength], out prefixLength);
    }

    /// <summary>The whole line for one subscription (sid included); returns the bytes written.</summary>
    public static int Write(Span<byte> span, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> reply,
        int headerSize, int totalSize)
    {
        // Written split, then the suffix moved right to make room for the sid.
        var length = WriteSplit(span, subject, reply, replySet: false, headerSize, totalSize, out var prefixLength);
        span[prefixLength..length].CopyTo(span[(prefixLength + sid.Length)..]);
        sid.CopyTo(span[prefixLength..]);
        return length + sid.Length;
    }
}
