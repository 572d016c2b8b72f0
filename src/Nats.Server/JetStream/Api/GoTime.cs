using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Api;

/// <summary>
/// A time as Go's time.Time marshals it: RFC 3339 with up to nine fractional digits (trailing zeros
/// dropped), UTC as "Z", and the zero time as "0001-01-01T00:00:00Z". Kept in unix nanoseconds so
/// store timestamps survive exactly.
/// </summary>
[JsonConverter(typeof(GoTimeConverter))]
internal readonly record struct GoTime(long UnixNanos, bool IsZero = false)
{
    public static readonly GoTime Zero = new(0, true);

    public static GoTime Now() => FromDateTime(DateTime.UtcNow);

    public static GoTime FromDateTime(DateTime time) =>
        time == default ? Zero : new GoTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100);

    public DateTime ToDateTime() => IsZero ? default : DateTime.UnixEpoch.AddTicks(UnixNanos / 100);

    public override string ToString()
    {
        if (IsZero)
        {
            return "0001-01-01T00:00:00Z";
        }
        var seconds = Math.DivRem(UnixNanos, 1_000_000_000L, out var nanos);
        if (nanos < 0)
        {
            seconds--;
            nanos += 1_000_000_000L;
        }
        var builder = new StringBuilder(DateTime.UnixEpoch.AddSeconds(seconds).ToString("yyyy-MM-ddTHH:mm:ss", CultureInfo.InvariantCulture));
        if (nanos != 0)
        {
            builder.Append('.').Append(nanos.ToString("D9", CultureInfo.InvariantCulture).TrimEnd('0'));
        }
        return builder.Append('Z').ToString();
    }

    public static bool TryParse(string text, out GoTime time)
    {
        time = Zero;
        if (!DateTimeOffset.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out var parsed))
        {
            return false;
        }
        if (parsed.UtcDateTime == DateTime.MinValue)
        {
            return true;
        }
        // Nanoseconds beyond the 100 ns tick are kept by reading the fraction ourselves.
        var ticks = (parsed.UtcDateTime - DateTime.UnixEpoch).Ticks;
        var nanos = ticks * 100;
        var dot = text.IndexOf('.');
        if (dot > 0)
        {
            var end = dot + 1;
            while (end < text.Length && char.IsAsciiDigit(text[end]))
            {
                end++;
            }
            var digits = text[(dot + 1)..end];
            if (digits.Length > 7)
            {
                nanos += long.Parse(digits.PadRight(9, '0')[7..9], CultureInfo.InvariantCulture);
            }
        }
        time = new GoTime(nanos);
        return true;
    }
}

internal sealed class GoTimeConverter : JsonConverter<GoTime>
{
    public override GoTime Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return GoTime.Zero;
        }
        var text = reader.GetString() ?? "";
        return GoTime.TryParse(text, out var time) ? time : throw new JsonException($"parsing time \"{text}\"");
    }

    public override void Write(Utf8JsonWriter writer, GoTime value, JsonSerializerOptions options) => writer.WriteStringValue(value.ToString());
}
