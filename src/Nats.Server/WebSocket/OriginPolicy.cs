using Microsoft.AspNetCore.Http;

namespace Nats.Server.WebSocket;

/// <summary>Go's srvWebsocket.checkOrigin: same_origin against the request's Host, allowed_origins by scheme, host and port.</summary>
internal sealed class OriginPolicy
{
    private readonly bool _sameOrigin;
    private readonly Dictionary<string, (string Scheme, string Port)> _allowed = new(StringComparer.Ordinal);

    public OriginPolicy(bool sameOrigin, List<string>? allowedOrigins)
    {
        _sameOrigin = sameOrigin;
        foreach (var origin in allowedOrigins ?? [])
        {
            if (Uri.TryCreate(origin, UriKind.Absolute, out var uri))
            {
                var (host, port) = HostAndPort(uri.Scheme == "https", uri.Authority);
                _allowed[host] = (uri.Scheme, port);
            }
        }
    }

    /// <summary>Null when the request may upgrade, else Go's reason.</summary>
    public string? Check(HttpRequest request)
    {
        if (!_sameOrigin && _allowed.Count == 0)
        {
            return null;
        }
        string? origin = request.Headers.Origin;
        if (string.IsNullOrEmpty(origin))
        {
            origin = request.Headers["Sec-Websocket-Origin"];
        }
        if (string.IsNullOrEmpty(origin))
        {
            return null;
        }
        if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri))
        {
            return $"parse \"{origin}\": invalid URI for request";
        }
        var (oh, op) = HostAndPort(uri.Scheme == "https", uri.Authority);
        if (_sameOrigin)
        {
            var (rh, rp) = HostAndPort(request.IsHttps, request.Host.Value ?? "");
            if (oh != rh || op != rp)
            {
                return "not same origin";
            }
        }
        if (_allowed.Count > 0 && (!_allowed.TryGetValue(oh, out var allowed) || allowed.Scheme != uri.Scheme || allowed.Port != op))
        {
            return "not in the allowed list";
        }
        return null;
    }

    /// <summary>Go's wsGetHostAndPort: lower-cased host, the port or the scheme's default.</summary>
    private static (string Host, string Port) HostAndPort(bool tls, string hostPort)
    {
        if (Configuration.ConfigRead.TrySplitHostPort(hostPort, out var host, out var port))
        {
            return (host.ToLowerInvariant(), port);
        }
        return (hostPort.Trim('[', ']').ToLowerInvariant(), tls ? "443" : "80");
    }
}
