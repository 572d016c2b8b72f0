using System.Globalization;
using System.Text;

namespace Nats.Server.Auth;

/// <summary>
/// Go's %q for a byte string (strconv.Quote): the permission-violation errors quote subjects this way,
/// so a subject holding '"', '\', control bytes or invalid UTF-8 is escaped exactly as Go escapes it.
/// </summary>
internal static class GoQuote
{
    public static string Quote(string value) => Quote(Encoding.UTF8.GetBytes(value));

    public static string Quote(ReadOnlySpan<byte> value)
    {
        var sb = new StringBuilder(value.Length + 2);
        sb.Append('"');
        while (!value.IsEmpty)
        {
            var status = Rune.DecodeFromUtf8(value, out var rune, out var consumed);
            if (status != System.Buffers.OperationStatus.Done)
            {
                sb.Append(CultureInfo.InvariantCulture, $"\\x{value[0]:x2}");
                value = value[1..];
                continue;
            }
            value = value[consumed..];
            AppendRune(sb, rune);
        }
        sb.Append('"');
        return sb.ToString();
    }

    private static void AppendRune(StringBuilder sb, Rune rune)
    {
        switch (rune.Value)
        {
            case '"': sb.Append("\\\""); return;
            case '\\': sb.Append("\\\\"); return;
            case '\a': sb.Append("\\a"); return;
            case '\b': sb.Append("\\b"); return;
            case '\f': sb.Append("\\f"); return;
            case '\n': sb.Append("\\n"); return;
            case '\r': sb.Append("\\r"); return;
            case '\t': sb.Append("\\t"); return;
            case '\v': sb.Append("\\v"); return;
        }
        if (rune.Value == ' ' || IsPrint(rune))
        {
            sb.Append(rune.ToString());
        }
        else if (rune.Value < ' ' || rune.Value == 0x7F)
        {
            sb.Append(CultureInfo.InvariantCulture, $"\\x{rune.Value:x2}");
        }
        else if (rune.Value < 0x10000)
        {
            sb.Append(CultureInfo.InvariantCulture, $"\\u{rune.Value:x4}");
        }
        else
        {
            sb.Append(CultureInfo.InvariantCulture, $"\\U{rune.Value:x8}");
        }
    }

    // unicode.IsPrint: letters, marks, numbers, punctuation and symbols.
    private static bool IsPrint(Rune rune) => Rune.GetUnicodeCategory(rune) switch
    {
        UnicodeCategory.Control or UnicodeCategory.Format or UnicodeCategory.Surrogate or UnicodeCategory.PrivateUse
            or UnicodeCategory.OtherNotAssigned or UnicodeCategory.LineSeparator or UnicodeCategory.ParagraphSeparator
            or UnicodeCategory.SpaceSeparator => false,
        _ => true,
    };
}
