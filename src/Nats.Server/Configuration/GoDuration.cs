namespace Nats.Server.Configuration;

/// <summary>
/// Parses duration strings the way Go's time.ParseDuration does ("300ms", "1.5h", "2h45m", "-1s"),
/// with the same error texts, because config files written for the Go server use that syntax.
/// </summary>
internal static class GoDuration
{
    private static readonly (string Unit, double Nanos)[] Units =
    [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("μs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
    ];

    public static bool TryParse(string text, out TimeSpan value, out string error)
    {
        value = TimeSpan.Zero;
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
            foreach (var (u, nanos) in Units)
            {
                if (u == unit)
                {
                    scale = nanos;
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
        long ticks = (long)(totalNanos / 100);
        value = TimeSpan.FromTicks(negative ? -ticks : ticks);
        error = "";
        return true;
    }

    public static TimeSpan Parse(string text) =>
        TryParse(text, out var value, out var error) ? value : throw new FormatException(error);

    /// <summary>Formats like Go's Duration.String() ("2m0s", "1.5s", "10ms"), used when echoing values back.</summary>
    public static string Format(TimeSpan d)
    {
        if (d == TimeSpan.Zero)
        {
            return "0s";
        }
        var sb = new System.Text.StringBuilder();
        if (d < TimeSpan.Zero)
        {
            sb.Append('-');
            d = d.Negate();
        }
        if (d < TimeSpan.FromSeconds(1))
        {
            double ns = d.Ticks * 100.0;
            return sb.Append(ns < 1e3 ? $"{ns}ns" : ns < 1e6 ? $"{ns / 1e3:0.######}µs" : $"{ns / 1e6:0.######}ms").ToString();
        }
        long hours = (long)d.TotalHours;
        if (hours > 0)
        {
            sb.Append(hours).Append('h');
        }
        if (hours > 0 || d.Minutes > 0)
        {
            sb.Append(d.Minutes).Append('m');
        }
        double seconds = d.Seconds + (d.Ticks % TimeSpan.TicksPerSecond) / (double)TimeSpan.TicksPerSecond;
        sb.Append(seconds.ToString("0.#########", System.Globalization.CultureInfo.InvariantCulture)).Append('s');
        return sb.ToString();
    }

    internal static string Quote(string s) => "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
}
