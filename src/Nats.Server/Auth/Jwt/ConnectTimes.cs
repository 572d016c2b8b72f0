namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's validateTimes: the user may connect inside one of its daily windows (in times_location, else
/// the server's zone); a window whose start is after its end runs into the next day. Returns how long
/// the current window still lasts.
/// </summary>
internal static class ConnectTimes
{
    public static bool Allowed(JwtUserPermissionLimits limits, DateTimeOffset utcNow, out TimeSpan? left)
    {
        left = null;
        if (limits.Times is not { Count: > 0 } ranges)
        {
            return true;
        }
        var zone = TimeZoneInfo.Local;
        if (!string.IsNullOrEmpty(limits.Locale) && !UserLimitsValidation.TryFindZone(limits.Locale, out zone))
        {
            return false;
        }
        var now = TimeZoneInfo.ConvertTime(utcNow, zone);
        foreach (var range in ranges)
        {
            if (!UserLimitsValidation.TryParseClock(range.Start ?? "", out var startClock) || !UserLimitsValidation.TryParseClock(range.End ?? "", out var endClock))
            {
                return false;
            }
            var today = new DateTimeOffset(now.Date, now.Offset);
            var start = today + startClock;
            var end = today + endClock + (startClock > endClock ? TimeSpan.FromDays(1) : TimeSpan.Zero);
            if (start < now && end > now)
            {
                left = end - now;
                return true;
            }
        }
        return false;
    }
}
