using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;

namespace Nats.Server.JetStream.Api;

/// <summary>
/// Escapes strings exactly as Go's encoding/json does: control characters, quote and backslash, plus
/// &lt; &gt; &amp; and U+2028/U+2029 as \u00XX (lowercase hex); everything else stays as UTF-8.
/// </summary>
internal sealed class GoJsonEncoder : JavaScriptEncoder
{
    public static readonly GoJsonEncoder Instance = new();

    public override int MaxOutputCharactersPerInputCharacter => 6;

    public override bool WillEncode(int unicodeScalar) =>
        unicodeScalar < 0x20 || unicodeScalar is '"' or '\\' or '<' or '>' or '&' or 0x2028 or 0x2029;

    public override unsafe int FindFirstCharacterToEncode(char* text, int textLength)
    {
        for (var i = 0; i < textLength; i++)
        {
            var c = text[i];
            if (WillEncode(c) || char.IsSurrogate(c) && (i + 1 >= textLength || !char.IsSurrogatePair(c, text[i + 1])))
            {
                return i;
            }
            if (char.IsHighSurrogate(c))
            {
                i++;
            }
        }
        return -1;
    }

    public override unsafe bool TryEncodeUnicodeScalar(int unicodeScalar, char* buffer, int bufferLength, out int numberOfCharactersWritten)
    {
        string text = unicodeScalar switch
        {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            _ when WillEncode(unicodeScalar) => "\\u" + unicodeScalar.ToString("x4", CultureInfo.InvariantCulture),
            _ => new Rune(unicodeScalar).ToString(),
        };
        if (text.Length > bufferLength)
        {
            numberOfCharactersWritten = 0;
            return false;
        }
        for (var i = 0; i < text.Length; i++)
        {
            buffer[i] = text[i];
        }
        numberOfCharactersWritten = text.Length;
        return true;
    }
}
