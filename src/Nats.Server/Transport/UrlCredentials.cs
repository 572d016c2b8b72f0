namespace Nats.Server.Transport;

/// <summary>The user and password a solicited peer URL carries (nats-route://user:pass@host:port), as Go's CONNECT takes them.</summary>
internal static class UrlCredentials
{
    /// <summary>The URL's user info, else <paramref name="user"/> and <paramref name="password"/>.</summary>
    public static (string? User, string? Password) Of(Uri? url, string? user = null, string? password = null)
    {
        if (url is null || url.UserInfo.Length == 0)
        {
            return (user, password);
        }
        var colon = url.UserInfo.IndexOf(':');
        return (Uri.UnescapeDataString(colon < 0 ? url.UserInfo : url.UserInfo[..colon]),
            colon < 0 ? null : Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]));
    }
}
