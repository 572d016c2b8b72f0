using System.Globalization;

namespace Nats.Server.Configuration;

/// <summary>
/// The typed getters every block binder reads values with, each failing with Go's exact text as a
/// <see cref="ConfigBindException"/> positioned at the value. A getter mirrors one Go idiom of opts.go:
/// <c>v.(string)</c>, <c>v.(int64)</c>, <c>v.(bool)</c>, a map or a list assertion, parseDuration,
/// getStorageSize, parseListen, parseStringArray.
/// </summary>
internal static class ConfigRead
{
    /// <summary>Go's <c>v.(T)</c> failing: the panic text Go reports, at the value.</summary>
    public static ConfigBindException Mismatch(this ConfigValue v, string expectedGoType) =>
        new(v, GoConfigText.InterfaceConversion(v.GoTypeName, expectedGoType));

    /// <summary>The <see cref="Mismatch"/> message, for binders that collect errors rather than throw.</summary>
    public static string MismatchText(this ConfigValue v, string expectedGoType) => v.Mismatch(expectedGoType).Message;

    public static string String(this ConfigValue v) => v.Value as string ?? throw v.Mismatch("string");

    public static bool Bool(this ConfigValue v) => v.Value is bool b ? b : throw v.Mismatch("bool");

    public static long Int64(this ConfigValue v) => v.Value is long l ? l : throw v.Mismatch("int64");

    /// <summary>An int64 that must fit an int field (the server's limits): "{field} value is too big" otherwise.</summary>
    public static int Int32(this ConfigValue v, string field)
    {
        var l = v.Int64();
        return l is > int.MaxValue or < int.MinValue ? throw new ConfigBindException(v, $"{field} value is too big") : (int)l;
    }

    public static Dictionary<string, ConfigValue> Map(this ConfigValue v) => v.AsMap ?? throw v.Mismatch("map[string]interface {}");

    public static List<ConfigValue> List(this ConfigValue v) => v.AsList ?? throw v.Mismatch("[]interface {}");

    /// <summary>
    /// Go's parseDuration: a duration string ("2m", "1.5s"), or a number of seconds accepted with a
    /// warning (Go asks for the string form; -t then refuses the file, as warnings do there).
    /// </summary>
    public static TimeSpan Duration(this ConfigValue v, string field, List<string> warnings)
    {
        if (v.Value is string)
        {
            return v.DurationString(field);
        }
        var seconds = v.Int64();
        warnings.Add($"{v.Source}: invalid use of field \"{field}\": {field} should be converted to a duration");
        return TimeSpan.FromSeconds(seconds);
    }

    /// <summary>A duration that must be a string (Go's time.ParseDuration on <c>v.(string)</c>).</summary>
    public static TimeSpan DurationString(this ConfigValue v, string field) =>
        GoDuration.TryParse(v.String(), out var d, out var error)
            ? d
            : throw new ConfigBindException(v, $"error parsing {field}: {error}");

    /// <summary>
    /// Seconds as an integer or a float, anything else silently 1: Go's reading of an authorization
    /// block's <c>timeout</c>.
    /// </summary>
    public static double SecondsOrOne(this ConfigValue v) => v.Value switch { long l => l, double d => d, _ => 1 };

    /// <summary>
    /// Go's getStorageSize: an integer (unquoted 1MB, 64KB, 1G are numbers already: the parser applies
    /// Go's suffixes, KB/MB binary and K/M decimal), or a string "N" + K/M/G/T, binary; "" is 0. The
    /// error text is Go's, without the field name.
    /// </summary>
    public static bool TryStorageSize(this ConfigValue v, out long size, out string error)
    {
        size = 0;
        error = "";
        switch (v.Value)
        {
            case long l:
                size = l;
                return true;
            case string s:
                if (s.Length == 0)
                {
                    return true;
                }
                var digits = s[..^1];
                if (!TryGoParseInt(digits, out var number, out error))
                {
                    return false;
                }
                var shift = s[^1] switch { 'K' => 10, 'M' => 20, 'G' => 30, 'T' => 40, _ => -1 };
                if (shift < 0)
                {
                    error = "sizes defined as strings must end in K, M, G, T";
                    return false;
                }
                size = number << shift;
                return true;
            default:
                error = "must be int64 or string";
                return false;
        }
    }

    /// <summary>Go's strconv.ParseInt(s, 10, 64) with its error texts.</summary>
    private static bool TryGoParseInt(string s, out long number, out string error)
    {
        error = "";
        var body = s.Length > 0 && s[0] is '+' or '-' ? s[1..] : s;
        if (body.Length == 0 || !body.All(char.IsAsciiDigit))
        {
            number = 0;
            error = $"strconv.ParseInt: parsing {GoConfigText.Quote(s)}: invalid syntax";
            return false;
        }
        if (!long.TryParse(s, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out number))
        {
            error = $"strconv.ParseInt: parsing {GoConfigText.Quote(s)}: value out of range";
            return false;
        }
        return true;
    }

    /// <summary>Go's parseListen: a port, or "host:port" (net.SplitHostPort, the host may be empty).</summary>
    public static (string? Host, int Port) HostPort(this ConfigValue v)
    {
        switch (v.Value)
        {
            case long port:
                return port is > int.MaxValue or < int.MinValue
                    ? throw new ConfigBindException(v, "port value is too big")
                    : (null, (int)port);
            case string s:
                if (!TrySplitHostPort(s, out var host, out var portText))
                {
                    throw new ConfigBindException(v, $"could not parse address string {GoConfigText.Quote(s)}");
                }
                if (!int.TryParse(portText, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var p))
                {
                    throw new ConfigBindException(v, $"could not parse port {GoConfigText.Quote(portText)}");
                }
                return (host, p);
            default:
                throw new ConfigBindException(v, $"expected port or host:port, got {v.GoTypeName}");
        }
    }

    /// <summary>net.SplitHostPort: "host:port" or "[v6]:port"; the host may be empty.</summary>
    public static bool TrySplitHostPort(string s, out string host, out string port)
    {
        host = port = "";
        var colon = s.LastIndexOf(':');
        if (colon < 0)
        {
            return false;
        }
        if (s.StartsWith('['))
        {
            var close = s.IndexOf(']');
            if (close < 0 || close + 1 != colon)
            {
                return false;
            }
            host = s[1..close];
        }
        else
        {
            host = s[..colon];
            if (host.Contains(':') || host.Contains('[') || host.Contains(']'))
            {
                return false;
            }
        }
        port = s[(colon + 1)..];
        return true;
    }

    /// <summary>
    /// Go's parseStringArray: one string or a list of strings. The first element that is not a string
    /// fails ("error parsing {field}: unsupported type in array T"), so does any other value.
    /// </summary>
    public static List<string> StringOrList(this ConfigValue v, string field) => v.Value switch
    {
        string one => [one],
        List<ConfigValue> list => list.Select(i => i.Value as string
            ?? throw new ConfigBindException(i, $"error parsing {field}: unsupported type in array {i.GoTypeName}")).ToList(),
        _ => throw new ConfigBindException(v, $"error parsing {field}: unsupported type {v.GoTypeName}"),
    };
}
