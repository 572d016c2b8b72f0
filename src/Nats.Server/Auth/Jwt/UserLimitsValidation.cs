using System.Globalization;
using System.Net;

namespace Nats.Server.Auth.Jwt;

/// <summary>Go's Limits.Validate and TimeRange.Validate: bad CIDRs, clock times or time zones make a user JWT invalid.</summary>
internal static class UserLimitsValidation
{
    public static void Validate(JwtUserPermissionLimits limits, JwtValidation result)
    {
        foreach (var cidr in limits.Src ?? [])
        {
            if (!IPNetwork.TryParse(cidr, out _))
            {
                result.AddError($"invalid cidr {GoQuote.Quote(cidr)} in user src limits");
            }
        }
        foreach (var range in limits.Times ?? [])
        {
            if (string.IsNullOrEmpty(range.Start))
            {
                result.AddError("time ranges start must contain a start");
            }
            else if (!TryParseClock(range.Start, out _))
            {
                result.AddError($"start in time range is invalid {GoQuote.Quote(range.Start)}");
            }
            if (string.IsNullOrEmpty(range.End))
            {
                result.AddError("time ranges end must contain an end");
            }
            else if (!TryParseClock(range.End, out _))
            {
                result.AddError($"end in time range is invalid {GoQuote.Quote(range.End)}");
            }
        }
        if (!string.IsNullOrEmpty(limits.Locale) && !TryFindZone(limits.Locale, out _))
        {
            result.AddError($"could not parse iana time zone by name: unknown time zone {limits.Locale}");
        }
    }

    /// <summary>Go's time.Parse("15:04:05", ...): two-digit hour, minute and second.</summary>
    public static bool TryParseClock(string text, out TimeSpan clock) =>
        TimeSpan.TryParseExact(text, @"hh\:mm\:ss", CultureInfo.InvariantCulture, out clock);

    public static bool TryFindZone(string name, out TimeZoneInfo zone)
    {
        zone = TimeZoneInfo.Local;
        if (name == "Local")
        {
            return true;
        }
        if (name == "UTC" || name == "")
        {
            zone = TimeZoneInfo.Utc;
            return true;
        }
        try
        {
            zone = TimeZoneInfo.FindSystemTimeZoneById(name);
            return true;
        }
        catch (Exception e) when (e is TimeZoneNotFoundException or InvalidTimeZoneException)
        {
            return false;
        }
    }
}
