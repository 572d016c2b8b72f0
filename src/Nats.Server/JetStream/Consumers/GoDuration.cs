using System.Globalization;
using System.Text;

namespace Nats.Server.JetStream.Consumers;

/// <summary>Go's time.ParseDuration and Duration.String for the texts the consumer protocol carries (NAK delays, 409 texts).</summary>
internal static class GoDuration
{
    public static bool TryParse(string text, out long nanos)
    {
        nanos = 0;
        var s = text.AsSpan();
        var negative = false;
        if (s.Length > 0 && (s[0] == '-' || s[0] == '+'))
        {
            negative = s[0] == '-';
            s = s[1..];
        }
        if (s.SequenceEqual("0"))
        {
            return true;
        }
        if (s.IsEmpty)
        {
            return false;
        }
        double total = 0;
        while (!s.IsEmpty)
        {
            var i = 0;
            while (i < s.Length && (char.IsAsciiDigit(s[i]) || s[i] == '.'))
            {
                i++;
            }
            if (i == 0 || !double.TryParse(s[..i], NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value))
            {
                return false;
            }
            s = s[i..];
            var j = 0;
            while (j < s.Length && !char.IsAsciiDigit(s[j]) && s[j] != '.')
            {
                j++;
            }
            double unit = s[..j] switch
            {
                "ns" => 1,
                "us" or "µs" or "μs" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => -1,
            };
            if (unit < 0)
            {
                return false;
            }
            total += value * unit;
            s = s[j..];
        }
        nanos = (long)(negative ? -total : total);
        return true;
    }

    /// <summary>Duration.String: "1h2m3.5s", "150ms", "2µs", "0s".</summary>
    public static string Format(long nanos)
    {
        if (nanos == 0)
        {
            return "0s";
        }
        var negative = nanos < 0;
        var u = (ulong)Math.Abs(nanos);
        var builder = new StringBuilder();
        if (u < 1_000_000_000)
        {
            var (unit, scale) = u < 1_000 ? ("ns", 1UL) : u < 1_000_000 ? ("µs", 1_000UL) : ("ms", 1_000_000UL);
            builder.Append(Fraction(u, scale)).Append(unit);
        }
        else
        {
            var hours = u / 3_600_000_000_000;
            var rest = u % 3_600_000_000_000;
            var minutes = rest / 60_000_000_000;
            rest %= 60_000_000_000;
            if (hours > 0)
            {
                builder.Append(hours).Append('h');
            }
            if (hours > 0 || minutes > 0)
            {
                builder.Append(minutes).Append('m');
            }
            builder.Append(Fraction(rest, 1_000_000_000)).Append('s');
        }
        return (negative ? "-" : "") + builder;
    }

    private static string Fraction(ulong value, ulong scale)
    {
        var whole = value / scale;
        var fraction = value % scale;
        if (fraction == 0)
        {
            return whole.ToString(CultureInfo.InvariantCulture);
        }
        var digits = scale.ToString(CultureInfo.InvariantCulture).Length - 1;
        return whole.ToString(CultureInfo.InvariantCulture) + "." + fraction.ToString(CultureInfo.InvariantCulture).PadLeft(digits, '0').TrimEnd('0');
    }
}
