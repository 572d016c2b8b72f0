using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Routes;

/// <summary>
/// The route subsystem of one server (Go's routing half of server.go and route.go): the route port,
/// the solicitors of explicit and gossiped routes, the <see cref="RouteTable"/>, each account's
/// <see cref="LocalInterest"/>, the cluster name (static, or dynamic until a peer's is adopted), and the
/// client URLs peers advertise, which go to clients in INFO connect_urls.
/// </summary>
internal sealed class ClusterService
{
    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly List<RouteSolicitor> _solicitors = [];
    private readonly HashSet<string> _implicitDials = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _peerClientUrls = new(StringComparer.Ordinal);
    private readonly Lock _sync = new();
    private readonly Transport.LinkSet<RouteConnection> _links = new();
    private RouteListener? _listener;
    private volatile string _clusterName;
    private volatile bool _dynamic;
    private string[] _ownClientUrls = [];

    public ClusterService(NatsServer server, ClusterOptions options, ILogger logger)
    {
        _server = server;
        Options = options;
        _logger = logger;
        _dynamic = string.IsNullOrEmpty(options.Name);
        _clusterName = _dynamic ? NewDynamicName() : options.Name;
    }

    public NatsServer Server => _server;
    /// <summary>The cluster block in force (a reload replaces it; host and port never change).</summary>
    public ClusterOptions Options { get; private set; }
    public RouteTable Table { get; } = new();
    public string ClusterName => _clusterName;
    public bool IsDynamicName => _dynamic;

    /// <summary>The bound route port.</summary>
    public int Port => _listener?.Port ?? 0;

    /// <summary>Binds the route port, starts observing every account's interest and dials the explicit routes.</summary>
    public void Start()
    {
        _logger.LogInformation("Cluster name is {Name}", _clusterName);
        if (_dynamic)
        {
            _logger.LogWarning("Cluster name was dynamically generated, consider setting one");
        }
        _ownClientUrls = OwnClientUrls();
        foreach (var account in _server.Accounts)
        {
            account.SubList.AddObserver(new LocalInterest(account, Table));
        }
        _listener = new RouteListener(socket => StartRoute(socket, solicited: false, url: null, configured: false), "route", Options.Host, Options.Port, _logger);
        _logger.LogInformation("Listening for route connections on {Host}:{Port}",
            string.IsNullOrEmpty(Options.Host) ? "0.0.0.0" : Options.Host, _listener.Port);
        _listener.Start(_links.Stopping);
        foreach (var url in Options.Routes)
        {
            var solicitor = new RouteSolicitor(this, url, isExplicit: true, _logger);
            lock (_sync)
            {
                _solicitors.Add(solicitor);
            }
            _links.Track(solicitor.Start(_links.Stopping));
        }
        _links.StartTicking();
    }

    /// <summary>
    /// Go's clusterOption.Apply: the new block's credentials, TLS and advertise settings apply to the next INFO and
    /// CONNECT; a new name replaces ours (dynamic no more). Accepted routes are checked against the new credentials
    /// by <see cref="CloseUnauthorizedRoutes"/>.
    /// </summary>
    public void ApplyReload(ClusterOptions options)
    {
        Options = options;
        if (!string.IsNullOrEmpty(options.Name) && options.Name != _clusterName)
        {
            _clusterName = options.Name;
            _dynamic = false;
            _logger.LogInformation("Cluster name updated to {Name}", options.Name);
        }
    }

    /// <summary>Go's routesOption.Apply: routes to removed URLs are closed and not dialled again; added URLs are dialled.</summary>
    public void ReloadRoutes(IReadOnlyList<Uri> add, IReadOnlyList<Uri> remove)
    {
        foreach (var url in remove)
        {
            List<RouteSolicitor> stopped;
            lock (_sync)
            {
                stopped = [.. _solicitors.Where(s => SameUrl(s.Url, url))];
                _solicitors.RemoveAll(stopped.Contains);
            }
            foreach (var solicitor in stopped)
            {
                solicitor.Stop();
            }
            foreach (var route in _links.All.Where(r => r.Solicited && r.Url is { } u && SameUrl(u, url)))
            {
                route.Close("Route Removed");
                _logger.LogInformation("Removed route {Url}", url);
            }
        }
        foreach (var url in add)
        {
            var solicitor = new RouteSolicitor(this, url, isExplicit: true, _logger);
            lock (_sync)
            {
                _solicitors.Add(solicitor);
            }
            _links.Track(solicitor.Start(_links.Stopping));
        }
    }

    /// <summary>Go's urlsAreEqual: the whole URL, credentials included.</summary>
    public static bool SameUrl(Uri a, Uri b) => string.Equals(a.OriginalString.TrimEnd('/'), b.OriginalString.TrimEnd('/'), StringComparison.Ordinal);

    /// <summary>Go's reloadAuthorization for routes: an accepted route whose CONNECT the cluster's credentials no longer
    /// admit is closed (a dialled one is left: we hold no credentials of the peer's to check).</summary>
    /// <summary>Go's recheckPinnedCerts for routes: the routes whose certificate is not in <paramref name="pinned"/>.</summary>
    public List<RouteConnection> RoutesNotPinned(IReadOnlySet<string>? pinned) =>
        [.. _links.All.Where(r => !r.IsClosed && Tls.PinnedCertificates.Check(pinned, r.Link.Tls?.PeerCertificate) is not null)];

    public void CloseUnauthorizedRoutes()
    {
        if (!Options.AuthRequired)
        {
            return;
        }
        foreach (var route in _links.All.Where(r => !r.Solicited && r.ConnectReceived))
        {
            if (!Authenticate(route.ConnectUser, route.ConnectPassword))
            {
                route.CloseUnauthorized();
            }
        }
    }

    /// <summary>
    /// Completes once every explicit route has had its first try (registered, refused or closed), or after
    /// <paramref name="limit"/>. The server accepts clients only then, so a client of a server that has just
    /// started learns its peers in its first INFO: Go's route handshake is done in about a millisecond after the
    /// client port opens, ours (a cold runtime) takes long enough that clients would otherwise hear of the peers
    /// only in a later INFO (nats.c's DiscoveredServersCb test counts on the first).
    /// </summary>
    public Task InitialRoutesAsync(TimeSpan limit)
    {
        Task[] first;
        lock (_sync)
        {
            first = [.. _solicitors.Select(s => s.FirstAttempt)];
        }
        return first.Length == 0 ? Task.CompletedTask : Task.WhenAny(Task.WhenAll(first), Task.Delay(limit));
    }

    /// <summary>Creates and runs a route over a connected socket (accepted or dialled).</summary>
    public RouteConnection StartRoute(Socket socket, bool solicited, Uri? url, bool configured)
    {
        var id = _server.NextClientId();
        return _links.Run(new RouteConnection(this, socket, id, solicited, url, configured, _logger));
    }

    /// <summary>Our route INFO (with a nonce on the accepting side), Go's generateRouteInfoJSON.</summary>
    public byte[] RenderInfo(string? nonce) => BuildInfo(nonce).Render();

    private ServerInfo BuildInfo(string? nonce)
    {
        var options = _server.Options;
        var (host, port, ip) = AdvertisedAddress();
        return new ServerInfo
        {
            ServerId = _server.ServerId,
            ServerName = _server.ServerName,
            Version = NatsServer.FeatureLevelVersion,
            Proto = 2,
            Go = "dotnet" + Environment.Version,
            Host = host,
            Port = port,
            Headers = !options.NoHeaderSupport,
            AuthRequired = Options.AuthRequired,
            TlsRequired = Options.TlsContext is not null,
            TlsVerify = Options.TlsContext is not null,
            MaxPayload = options.MaxPayload,
            JetStream = options.JetStream.Enabled,
            Ip = ip,
            Nonce = nonce,
            Cluster = _clusterName,
            Dynamic = _dynamic,
            ConnectUrls = Options.NoAdvertise || _ownClientUrls.Length == 0 ? null : [.. _ownClientUrls],
            LameDuckMode = _server.IsLameDuckMode,
            Lnoc = true,
            GatewayUrl = _server.Gateways?.Url,
        };
    }

    /// <summary>Go's setRouteInfoHostPortAndIP: an advertise address replaces host and port too (its port defaulting to
    /// the route port), so a peer that records where we are dials what we advertise.</summary>
    private (string Host, int Port, string? Ip) AdvertisedAddress()
    {
        var advertise = Options.Advertise;
        if (string.IsNullOrEmpty(advertise))
        {
            return (string.IsNullOrEmpty(Options.Host) ? "0.0.0.0" : Options.Host, Port, null);
        }
        var host = advertise;
        var port = Port;
        if (ConfigRead.TrySplitHostPort(advertise, out var h, out var p) && int.TryParse(p, out var parsed))
        {
            (host, port) = (h, parsed);
        }
        var hostPort = host.Contains(':') ? $"[{host}]:{port}" : $"{host}:{port}";
        return (host, port, $"nats-route://{hostPort}/");
    }

    /// <summary>Our CONNECT on a route we dialled; credentials from the URL, else our own cluster's (gossiped routes).</summary>
    public byte[] RenderConnect(Uri? url)
    {
        var (user, pass) = Transport.UrlCredentials.Of(url, Options.Username, Options.Password);
        return new PeerConnect
        {
            Echo = true,
            User = user,
            Pass = pass,
            TlsRequired = Options.TlsContext is not null,
            Headers = !_server.Options.NoHeaderSupport,
            Name = _server.ServerId,
            Cluster = _clusterName,
            Dynamic = _dynamic,
            Lnoc = true,
        }.RenderRoute();
    }

    public bool Authenticate(string? user, string? password)
    {
        if (user != Options.Username)
        {
            return false;
        }
        var expected = Options.Password ?? "";
        return Auth.Bcrypt.IsBcryptHash(expected) ? Auth.Bcrypt.Verify(password ?? "", expected) : expected == (password ?? "");
    }

    /// <summary>
    /// Go's cluster-name check: equal names pass; a dynamic name gives way to a peer's static or
    /// greater name (and the other routes, made under the old name, are dropped); else a conflict.
    /// </summary>
    public bool AcceptClusterName(string name, bool peerDynamic, RouteConnection via)
    {
        lock (_sync)
        {
            if (name == _clusterName)
            {
                return true;
            }
            if (!_dynamic || (peerDynamic && string.CompareOrdinal(_clusterName, name) >= 0))
            {
                return false;
            }
            _clusterName = name;
            _dynamic = peerDynamic;
        }
        _logger.LogInformation("Cluster name updated to {Name}", name);
        foreach (var route in _links.All)
        {
            if (!ReferenceEquals(route, via))
            {
                route.Close("Cluster Name Conflict");
            }
        }
        return true;
    }

    /// <summary>A route passed its first INFO: send it our interest, learn its clients' URLs, and introduce it to the others.</summary>
    public void OnRouteRegistered(RouteConnection route)
    {
        foreach (var account in _server.Accounts)
        {
            if (account.SubList.FindObserver<LocalInterest>() is { } interest)
            {
                interest.DumpTo(route);
            }
        }
        var info = route.RemoteInfo!;
        if (!info.LameDuckMode)
        {
            AddPeerClientUrls(info.ConnectUrls);
        }
        var forwarded = info.Clone();
        forwarded.Nonce = null;
        if (string.IsNullOrEmpty(forwarded.Ip))
        {
            var ip = route.RemoteIp.Contains(':') ? $"[{route.RemoteIp}]" : route.RemoteIp;
            forwarded.Ip = $"nats-route://{ip}:{info.Port}/";
        }
        var line = forwarded.Render();
        foreach (var other in Table.Registered)
        {
            if (!ReferenceEquals(other, route))
            {
                other.Outbound.Append(line);
            }
        }
    }

    /// <summary>A peer's new INFO: its client URLs (gone in lame duck mode) follow.</summary>
    public void OnPeerInfoUpdated(RouteConnection route, ServerInfo? previous, ServerInfo current)
    {
        if (previous is not null && !previous.LameDuckMode)
        {
            RemovePeerClientUrls(previous.ConnectUrls);
        }
        if (!current.LameDuckMode)
        {
            AddPeerClientUrls(current.ConnectUrls);
        }
    }

    /// <summary>Gossip: a server we are not connected to, reachable at its INFO's <c>ip</c>; dial it once.</summary>
    public void OnGossip(ServerInfo info)
    {
        if (info.ServerId == _server.ServerId || Table.IsConnected(info.ServerId) || string.IsNullOrEmpty(info.Ip))
        {
            return;
        }
        if (!Uri.TryCreate(info.Ip, UriKind.Absolute, out var url))
        {
            return;
        }
        foreach (var configured in Options.Routes)
        {
            if (string.Equals(configured.Host, url.Host, StringComparison.OrdinalIgnoreCase) && configured.Port == url.Port)
            {
                return;
            }
        }
        lock (_sync)
        {
            if (_links.IsStopping || !_implicitDials.Add(info.ServerId))
            {
                return;
            }
            var solicitor = new RouteSolicitor(this, url, isExplicit: false, _logger);
            var task = solicitor.Start(_links.Stopping);
            _links.Track(task);
            task.ContinueWith(_ =>
            {
                lock (_sync)
                {
                    _implicitDials.Remove(info.ServerId);
                }
            }, TaskScheduler.Default);
        }
    }

    public void OnRouteToSelf(RouteConnection route)
    {
        lock (_sync)
        {
            foreach (var solicitor in _solicitors)
            {
                if (route.Url is not null && solicitor.Url == route.Url)
                {
                    solicitor.MarkSelf();
                }
            }
        }
    }

    public void OnRouteClosed(RouteConnection route, bool registered)
    {
        _links.Remove(route);
        if (Table.Remove(route) && route.RemoteInfo is { LameDuckMode: false } info)
        {
            RemovePeerClientUrls(info.ConnectUrls);
        }
    }

    private void AddPeerClientUrls(List<string>? urls)
    {
        if (urls is not { Count: > 0 } || Options.NoAdvertise)
        {
            return;
        }
        var changed = false;
        lock (_sync)
        {
            foreach (var url in urls)
            {
                _peerClientUrls.TryGetValue(url, out var count);
                _peerClientUrls[url] = count + 1;
                changed |= count == 0;
            }
        }
        if (changed)
        {
            PublishClientUrls();
        }
    }

    private void RemovePeerClientUrls(List<string>? urls)
    {
        if (urls is not { Count: > 0 } || Options.NoAdvertise)
        {
            return;
        }
        var changed = false;
        lock (_sync)
        {
            foreach (var url in urls)
            {
                if (_peerClientUrls.TryGetValue(url, out var count))
                {
                    if (count <= 1)
                    {
                        _peerClientUrls.Remove(url);
                        changed = true;
                    }
                    else
                    {
                        _peerClientUrls[url] = count - 1;
                    }
                }
            }
        }
        if (changed)
        {
            PublishClientUrls();
        }
    }

    /// <summary>Go's updateServerINFOAndSendINFOToClients: our own URLs first, then the peers'; clients get an async INFO.</summary>
    private void PublishClientUrls()
    {
        string[] urls;
        lock (_sync)
        {
            urls = [.. _ownClientUrls, .. _peerClientUrls.Keys.Where(u => !_ownClientUrls.Contains(u))];
        }
        _server.SetClusterConnectUrls(urls);
    }

    /// <summary>Go's getClientConnectURLs: client_advertise, or the listen host, or every non-loopback address when it listens on all.</summary>
    private string[] OwnClientUrls()
    {
        var options = _server.Options;
        var port = _server.Port;
        if (!string.IsNullOrEmpty(options.ClientAdvertise))
        {
            var advertise = options.ClientAdvertise;
            return [advertise.Contains(':') && !advertise.EndsWith(']') ? advertise : $"{advertise}:{port}"];
        }
        var host = options.Host;
        if (host is not ("0.0.0.0" or "::" or "[::]" or ""))
        {
            return [Join(host, port)];
        }
        var urls = new List<string>();
        try
        {
            foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
            {
                foreach (var address in nic.GetIPProperties().UnicastAddresses)
                {
                    var ip = address.Address;
                    if (IPAddress.IsLoopback(ip) || ip.IsIPv6LinkLocal || (host == "0.0.0.0" && ip.AddressFamily != AddressFamily.InterNetwork))
                    {
                        continue;
                    }
                    urls.Add(Join(ip.ToString(), port));
                }
            }
        }
        catch (NetworkInformationException)
        {
        }
        return [.. urls];
    }

    private static string Join(string host, int port) => host.Contains(':') && !host.StartsWith('[') ? $"[{host}]:{port}" : $"{host}:{port}";

    /// <summary>Lame duck mode: peers are told (INFO ldm) so they stop advertising our client URLs.</summary>
    public void AnnounceLameDuck()
    {
        var line = RenderInfo(null);
        foreach (var route in Table.Registered)
        {
            route.Outbound.Append(line);
        }
    }

    public Task ShutdownAsync() => _links.ShutdownAsync(() => _listener?.StopAsync() ?? Task.CompletedTask);

    private static string NewDynamicName()
    {
        // Go uses a NUID: 22 base62 characters.
        const string alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> name = stackalloc char[22];
        for (var i = 0; i < name.Length; i++)
        {
            name[i] = alphabet[Random.Shared.Next(alphabet.Length)];
        }
        return new string(name);
    }
}
