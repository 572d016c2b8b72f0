namespace Nats.Server.Configuration;

/// <summary>
/// Go's time.ParseDuration ("300ms", "1.5h", "2h45m", "-1s") with the same error texts, and
/// Duration.String: config files written for the Go server use that syntax, and so do protocol texts
/// (consumer NAK delays, 409 status texts), which keep nanoseconds.
/// </summary>
internal static class GoDuration
{
    private static readonly (string Unit, double Nanos)[] Units =
    [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("μs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
    ];

    public static bool TryParse(string text, out TimeSpan value, out string error)
    {
        var parsed = TryParseNanos(text, out var nanos, out error);
        value = TimeSpan.FromTicks(nanos / 100);
        return parsed;
    }

    /// <summary>As <see cref="TryParse(string, out TimeSpan, out string)"/>, in nanoseconds (Go's time.Duration).</summary>
    public static bool TryParseNanos(string text, out long nanos, out string error)
    {
        nanos = 0;
        error = $"time: invalid duration {Quote(text)}";
        string s = text;
        bool negative = false;
        if (s.Length > 0 && (s[0] == '-' || s[0] == '+'))
        {
            negative = s[0] == '-';
            s = s[1..];
        }
        if (s == "0")
        {
            return true;
        }
        if (s.Length == 0)
        {
            return false;
        }
        double totalNanos = 0;
        while (s.Length > 0)
        {
            if (!(char.IsAsciiDigit(s[0]) || s[0] == '.'))
            {
                return false;
            }
            int i = 0;
            while (i < s.Length && char.IsAsciiDigit(s[i]))
            {
                i++;
            }
            bool hasInt = i > 0;
            int numberEnd = i;
            bool hasFraction = false;
            if (i < s.Length && s[i] == '.')
            {
                i++;
                int fracStart = i;
                while (i < s.Length && char.IsAsciiDigit(s[i]))
                {
                    i++;
                }
                hasFraction = i > fracStart;
                numberEnd = i;
            }
            if (!hasInt && !hasFraction)
            {
                return false;
            }
            double number = double.Parse(s.AsSpan(0, numberEnd), System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture);
            int unitStart = i;
            while (i < s.Length && s[i] != '.' && !char.IsAsciiDigit(s[i]))
            {
                i++;
            }
            string unit = s[unitStart..i];
            if (unit.Length == 0)
            {
                error = $"time: missing unit in duration {Quote(text)}";
                return false;
            }
            double? scale = null;
            foreach (var (u, unitNanos) in Units)
            {
                if (u == unit)
                {
                    scale = unitNanos;
                    break;
                }
            }
            if (scale is null)
            {
                error = $"time: unknown unit {Quote(unit)} in duration {Quote(text)}";
                return false;
            }
            totalNanos += number * scale.Value;
            if (totalNanos > long.MaxValue)
            {
                return false;
            }
            s = s[i..];
        }
        nanos = negative ? -(long)totalNanos : (long)totalNanos;
        error = "";
        return true;
    }

    public static TimeSpan Parse(string text) =>
        TryParse(text, out var value, out var error) ? value : throw new FormatException(error);

    /// <summary>Formats like Go's Duration.String() ("2m0s", "1.5s", "10ms"), used when echoing values back.</summary>
    public static string Format(TimeSpan d) => FormatNanos(d.Ticks * 100);

    /// <summary>Duration.String of nanoseconds: "1h2m3.5s", "150ms", "2µs", "0s".</summary>
    public static string FormatNanos(long nanos)
    {
        if (nanos == 0)
        {
            return "0s";
        }
        var u = nanos < 0 ? (ulong)-(nanos + 1) + 1 : (ulong)nanos;
        var sb = new System.Text.StringBuilder(nanos < 0 ? "-" : "");
        if (u < 1_000_000_000)
        {
            var (unit, scale) = u < 1_000 ? ("ns", 1UL) : u < 1_000_000 ? ("µs", 1_000UL) : ("ms", 1_000_000UL);
            return sb.Append(Fraction(u, scale)).Append(unit).ToString();
        }
        var hours = u / 3_600_000_000_000;
        var rest = u % 3_600_000_000_000;
        var minutes = rest / 60_000_000_000;
        rest %= 60_000_000_000;
        if (hours > 0)
        {
            sb.Append(hours).Append('h');
        }
        if (hours > 0 || minutes > 0)
        {
            sb.Append(minutes).Append('m');
        }
        return sb.Append(Fraction(rest, 1_000_000_000)).Append('s').ToString();
    }

    /// <summary><paramref name="value"/> / <paramref name="scale"/> with the fraction's trailing zeros dropped, as Go's fmtFrac.</summary>
    private static string Fraction(ulong value, ulong scale)
    {
        var whole = value / scale;
        var fraction = value % scale;
        var text = whole.ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (fraction == 0)
        {
            return text;
        }
        var digits = scale.ToString(System.Globalization.CultureInfo.InvariantCulture).Length - 1;
        return text + "." + fraction.ToString(System.Globalization.CultureInfo.InvariantCulture).PadLeft(digits, '0').TrimEnd('0');
    }

    internal static string Quote(string s) => "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
}
