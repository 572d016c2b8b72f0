using System.Globalization;
using System.Text;

namespace Nats.Server.Monitoring;

/// <summary>
/// The Go server's textual forms of times and durations, so tools written against its JSON
/// (prometheus-nats-exporter, nats-top, surveyor) parse ours unchanged.
/// </summary>
internal static class GoFormat
{
    /// <summary>RFC 3339 with the fraction trimmed of trailing zeros, like Go's time.RFC3339Nano.</summary>
    public static string Time(DateTime utc)
    {
        if (utc.Kind == DateTimeKind.Local)
        {
            utc = utc.ToUniversalTime();
        }
        return utc.ToString("yyyy-MM-dd'T'HH:mm:ss.FFFFFFF'Z'", CultureInfo.InvariantCulture);
    }

    /// <summary>The monitor's coarse uptime form (myUptime): whole seconds, then "1m2s", "3h0m1s", "2d...", "1y...".</summary>
    public static string Uptime(TimeSpan elapsed)
    {
        var seconds = (long)Math.Max(0, elapsed.TotalSeconds);
        var minutes = seconds / 60;
        var hours = minutes / 60;
        var days = hours / 24;
        var years = days / 365;
        var ci = CultureInfo.InvariantCulture;
        if (years > 0)
        {
            return string.Format(ci, "{0}y{1}d{2}h{3}m{4}s", years, days % 365, hours % 24, minutes % 60, seconds % 60);
        }
        if (days > 0)
        {
            return string.Format(ci, "{0}d{1}h{2}m{3}s", days, hours % 24, minutes % 60, seconds % 60);
        }
        if (hours > 0)
        {
            return string.Format(ci, "{0}h{1}m{2}s", hours, minutes % 60, seconds % 60);
        }
        if (minutes > 0)
        {
            return string.Format(ci, "{0}m{1}s", minutes, seconds % 60);
        }
        return string.Format(ci, "{0}s", seconds);
    }

    /// <summary>
    /// Go's time.Duration.String() for a nanosecond count: "0s", "850ns", "591µs", "1.234567ms", "2.5s", "1m30s", "2h0m0s".
    /// </summary>
    public static string Duration(long nanoseconds)
    {
        if (nanoseconds == 0)
        {
            return "0s";
        }
        var negative = nanoseconds < 0;
        var u = negative ? (ulong)(-nanoseconds) : (ulong)nanoseconds;
        var sb = new StringBuilder(24);
        if (u < 1_000_000_000UL)
        {
            // Sub-second: one unit with a fractional part.
            string unit;
            int precision;
            if (u < 1_000UL)
            {
                sb.Append(u.ToString(CultureInfo.InvariantCulture)).Append("ns");
                return negative ? "-" + sb : sb.ToString();
            }
            if (u < 1_000_000UL)
            {
                unit = "µs";
                precision = 3;
            }
            else
            {
                unit = "ms";
                precision = 6;
            }
            AppendFraction(sb, u, precision);
            sb.Append(unit);
            return negative ? "-" + sb : sb.ToString();
        }

        var totalSeconds = u / 1_000_000_000UL;
        var fraction = u % 1_000_000_000UL;
        var hours = totalSeconds / 3600;
        var minutes = totalSeconds / 60 % 60;
        var seconds = totalSeconds % 60;
        if (hours > 0)
        {
            sb.Append(hours.ToString(CultureInfo.InvariantCulture)).Append('h');
        }
        if (hours > 0 || minutes > 0)
        {
            sb.Append(minutes.ToString(CultureInfo.InvariantCulture)).Append('m');
        }
        AppendFraction(sb, seconds * 1_000_000_000UL + fraction, 9);
        sb.Append('s');
        return negative ? "-" + sb : sb.ToString();
    }

    public static string Duration(TimeSpan span) => Duration(span.Ticks * 100);

    /// <summary>Writes value / 10^precision with the fractional digits trimmed of trailing zeros.</summary>
    private static void AppendFraction(StringBuilder sb, ulong value, int precision)
    {
        ulong scale = 1;
        for (var i = 0; i < precision; i++)
        {
            scale *= 10;
        }
        sb.Append((value / scale).ToString(CultureInfo.InvariantCulture));
        var fraction = value % scale;
        if (fraction == 0)
        {
            return;
        }
        var digits = fraction.ToString(CultureInfo.InvariantCulture).PadLeft(precision, '0').TrimEnd('0');
        sb.Append('.').Append(digits);
    }

    /// <summary>Go's client.getRTT: sub-millisecond values are truncated to whole microseconds.</summary>
    public static string Rtt(TimeSpan rtt)
    {
        var ns = rtt.Ticks * 100;
        if (ns > 1_000 && ns < 1_000_000)
        {
            ns -= ns % 1_000;
        }
        return Duration(ns);
    }
}
