using System.Text;

namespace Nats.Server.JetStream;

/// <summary>Reads one header from a NATS/1.0 header block the way Go's getHeader does (exact, case-sensitive key).</summary>
internal static class NatsHeaders
{
    public const string MsgId = "Nats-Msg-Id";
    public const string ExpectedStream = "Nats-Expected-Stream";
    public const string ExpectedLastSeq = "Nats-Expected-Last-Sequence";
    public const string ExpectedLastSubjSeq = "Nats-Expected-Last-Subject-Sequence";
    public const string ExpectedLastMsgId = "Nats-Expected-Last-Msg-Id";
    public const string Rollup = "Nats-Rollup";

    public static string? Get(ReadOnlySpan<byte> headers, string key)
    {
        if (headers.IsEmpty)
        {
            return null;
        }
        Span<byte> needle = stackalloc byte[key.Length + 3];
        needle[0] = (byte)'\r';
        needle[1] = (byte)'\n';
        Encoding.ASCII.GetBytes(key, needle[2..]);
        needle[^1] = (byte)':';
        var index = headers.IndexOf(needle);
        if (index < 0)
        {
            return null;
        }
        var rest = headers[(index + needle.Length)..];
        var end = rest.IndexOf("\r\n"u8);
        var value = end < 0 ? rest : rest[..end];
        return Encoding.UTF8.GetString(value).Trim();
    }

    /// <summary>Go's getExpectedLastSeq and friends: present only when the value parses as an unsigned number.</summary>
    public static bool TryGetSequence(ReadOnlySpan<byte> headers, string key, out ulong value)
    {
        value = 0;
        var text = Get(headers, key);
        return text is not null && ulong.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out value);
    }
}
