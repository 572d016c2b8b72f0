using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Routes;

namespace Nats.Server.Gateways;

/// <summary>
/// The gateway subsystem of one server (Go's srvGateway): the gateway port and its INFO, one
/// <see cref="GatewayRemoteState"/> per remote cluster (configured or implicit) keeping one outbound connection,
/// the inbound connections, one <see cref="GatewayAccountInterest"/> per account, and the <c>_GR_.</c> reply routing.
/// </summary>
internal sealed class GatewayService
{
    // Go's defaultSolicitGatewaysDelay: lets the local cluster form before the remote clusters are dialled.
    private static readonly TimeSpan SolicitDelay = TimeSpan.FromSeconds(1);

    private static ReadOnlySpan<byte> ReplyPrefixStart => "_GR_."u8;

    // "_GR_." + cluster hash + "." + server hash + "."
    private const int SubjectOffset = 5 + GatewayHash.Length + 1 + GatewayHash.Length + 1;

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly Lock _sync = new();
    private readonly Transport.LinkSet<GatewayConnection> _links = new();
    private readonly Dictionary<string, GatewayRemoteState> _remotes = new(StringComparer.Ordinal);
    private readonly Dictionary<string, GatewayConnection> _outbound = new(StringComparer.Ordinal);
    private volatile GatewayConnection[] _inbound = [];
    private volatile GatewayConnection[] _outboundList = [];
    private (byte[] Name, GatewayAccountInterest Interest)[] _interest = [];
    private RouteListener? _listener;
    private string _host = "";
    private int _advertisedPort;

    public GatewayService(NatsServer server, GatewayOptions options, ILogger logger)
    {
        _server = server;
        Options = options;
        _logger = logger;
        ClusterHash = GatewayHash.Of(options.Name);
        ServerHash = GatewayHash.Of(server.ServerId);
        ReplyPrefix = [.. ReplyPrefixStart, .. ClusterHash, (byte)'.', .. ServerHash, (byte)'.'];
    }

    public NatsServer Server => _server;
    public GatewayOptions Options { get; }
    public string Name => Options.Name;
    public byte[] ClusterHash { get; }
    public byte[] ServerHash { get; }

    /// <summary><c>_GR_.&lt;cluster hash&gt;.&lt;server hash&gt;.</c>: what a mapped reply starts with.</summary>
    public byte[] ReplyPrefix { get; }

    public int Port => _listener?.Port ?? 0;

    /// <summary>The host and port in our gateway INFO (Go's gateway info Host/Port).</summary>
    public (string Host, int Port) Advertised => (_host, _advertisedPort);

    /// <summary>This server's gateway URL as advertised (host:port).</summary>
    public string Url => _host.Contains(':') ? $"[{_host}]:{_advertisedPort}" : $"{_host}:{_advertisedPort}";

    public GatewayConnection[] Inbound => _inbound;
    public GatewayConnection[] Outbound => _outboundList;

    public IReadOnlyList<GatewayRemoteState> Remotes
    {
        get
        {
            lock (_sync)
            {
                return [.. _remotes.Values];
            }
        }
    }

    public void Start()
    {
        var interest = new List<(byte[], GatewayAccountInterest)>();
        foreach (var account in _server.Accounts)
        {
            var observer = new GatewayAccountInterest(account, this);
            interest.Add((account.NameUtf8, observer));
            account.SubList.AddObserver(observer);
        }
        _interest = [.. interest];
        _listener = new RouteListener(socket => StartConnection(socket, null, null), "gateway", Options.Host, Options.Port, _logger);
        (_host, _advertisedPort) = AdvertisedAddress();
        _logger.LogInformation("Gateway name is {Name}", Name);
        _logger.LogInformation("Listening for gateways connections on {Host}:{Port}",
            string.IsNullOrEmpty(Options.Host) ? "0.0.0.0" : Options.Host, _listener.Port);
        _logger.LogInformation("Address for gateway \"{Name}\" is {Url}", Name, Url);
        _listener.Start(_links.Stopping);
        lock (_sync)
        {
            foreach (var remote in Options.Gateways)
            {
                // A server may list its own cluster among the gateways: Go keeps those URLs for monitoring only.
                if (remote.Name == Name || _remotes.ContainsKey(remote.Name))
                {
                    continue;
                }
                var state = new GatewayRemoteState(this, remote.Name, remote.Urls, implicitRemote: false, _logger);
                _remotes[remote.Name] = state;
                _links.Track(state.Start(SolicitDelay, _links.Stopping));
            }
        }
        _links.StartTicking();
    }

    public GatewayConnection StartConnection(Socket socket, GatewayRemoteState? remote, Uri? url) =>
        _links.Run(new GatewayConnection(this, socket, _server.NextClientId(), remote, url, _logger));

    /// <summary>Go's setGatewayInfoHostPort: the advertise address, else the listen host (any address resolved to
    /// the first non-loopback one).</summary>
    private (string Host, int Port) AdvertisedAddress()
    {
        var port = _listener!.Port;
        if (!string.IsNullOrEmpty(Options.Advertise))
        {
            if (Configuration.ConfigRead.TrySplitHostPort(Options.Advertise, out var h, out var p) && int.TryParse(p, out var parsed))
            {
                return (h, parsed);
            }
            return (Options.Advertise, port);
        }
        var host = Options.Host;
        if (host is "" or "0.0.0.0" or "::" or "[::]")
        {
            try
            {
                foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
                {
                    foreach (var address in nic.GetIPProperties().UnicastAddresses)
                    {
                        if (!IPAddress.IsLoopback(address.Address) && address.Address.AddressFamily == AddressFamily.InterNetwork)
                        {
                            return (address.Address.ToString(), port);
                        }
                    }
                }
            }
            catch (NetworkInformationException)
            {
            }
            return ("0.0.0.0", port);
        }
        return (host, port);
    }

    /// <summary>Every gateway URL of our cluster: ours and those our routes advertised (gateway_url).</summary>
    public List<string> ClusterUrls()
    {
        var urls = new List<string> { Url };
        if (_server.Cluster is { } cluster)
        {
            foreach (var route in cluster.Table.Registered)
            {
                if (route.RemoteInfo?.GatewayUrl is { Length: > 0 } url && !urls.Contains(url))
                {
                    urls.Add(url);
                }
            }
        }
        return urls;
    }

    /// <summary>The acceptor's INFO (Go's gateway info): interest-only right away (gateway_iom) and the _GR_ reply prefix (gateway_nrp).</summary>
    public byte[] RenderInfo()
    {
        var options = _server.Options;
        return new ServerInfo
        {
            ServerId = _server.ServerId,
            ServerName = _server.ServerName,
            Version = NatsServer.FeatureLevelVersion,
            Host = _host,
            Port = _advertisedPort,
            Headers = !options.NoHeaderSupport,
            AuthRequired = Options.AuthRequired,
            TlsRequired = Options.TlsContext is not null,
            TlsVerify = Options.TlsContext is not null,
            MaxPayload = options.MaxPayload,
            Gateway = Name,
            GatewayUrls = ClusterUrls(),
            GatewayUrl = Url,
            GatewayNrp = true,
            GatewayIom = true,
        }.Render(spaceBeforeCrLf: false);
    }

    /// <summary>Go's gateway cfg TLSConfig: a configured remote's own tls {}, else the gateway's (implicit remotes too).</summary>
    public Tls.TlsServerContext? TlsFor(string remote) =>
        Options.Gateways.FirstOrDefault(g => g.Name == remote)?.TlsContext ?? Options.TlsContext;

    /// <summary>An interest-only switch command for <paramref name="account"/> (Go sends a bare Info with the gateway name).</summary>
    public byte[] RenderCommand(byte command, string account) =>
        new ServerInfo { Gateway = Name, GatewayCmd = command, GatewayCmdPayload = System.Text.Encoding.UTF8.GetBytes(account) }.Render(spaceBeforeCrLf: false);

    /// <summary>Go's sendGatewayConnect: credentials from the URL, else the gateway authorization's.</summary>
    public byte[] RenderConnect(Uri? url, bool tlsRequired)
    {
        var (user, pass) = Transport.UrlCredentials.Of(url, Options.Username, Options.Password);
        return new PeerConnect
        {
            Echo = false,
            User = user,
            Pass = pass,
            TlsRequired = tlsRequired,
            Name = _server.ServerId,
            Cluster = "",
            Gateway = Name,
        }.RenderRoute();
    }

    public bool Authenticate(string? user, string? password)
    {
        if (!Options.AuthRequired)
        {
            return true;
        }
        var expected = Options.Password ?? "";
        return user == Options.Username &&
            (Auth.Bcrypt.IsBcryptHash(expected) ? Auth.Bcrypt.Verify(password ?? "", expected) : expected == (password ?? ""));
    }

    public bool IsConfigured(string name)
    {
        lock (_sync)
        {
            return _remotes.ContainsKey(name);
        }
    }

    public bool HasInbound(string name) => _inbound.Any(c => c.Name == name);

    /// <summary>Go's isDuplicateServerName: our own name or a route's.</summary>
    public bool IsDuplicateServerName(string name)
    {
        if (string.IsNullOrEmpty(name))
        {
            return false;
        }
        if (name == _server.ServerName)
        {
            return true;
        }
        return _server.Cluster is { } cluster && cluster.Table.Registered.Any(r => r.RemoteName == name);
    }

    /// <summary>One outbound per remote cluster: a second one (two dials crossing) is refused.</summary>
    public bool RegisterOutbound(GatewayConnection connection)
    {
        lock (_sync)
        {
            if (_outbound.TryGetValue(connection.Name, out var existing) && !existing.Link.IsClosed)
            {
                return false;
            }
            _outbound[connection.Name] = connection;
            _outboundList = [.. _outbound.Values];
        }
        return true;
    }

    /// <summary>An inbound passed its handshake (Go's processGatewayInfo, first INFO of an inbound): our queue groups,
    /// an outbound back if we have none, the other gateways we know (gossip), then every account interest-only.</summary>
    public void OnInboundRegistered(GatewayConnection inbound, ServerInfo info)
    {
        lock (_sync)
        {
            _inbound = [.. _inbound, inbound];
        }
        foreach (var (_, interest) in _interest)
        {
            interest.SendQueues(inbound);
        }
        ProcessImplicit(info.Gateway ?? inbound.Name, info.GatewayUrls);
        foreach (var remote in Remotes)
        {
            if (remote.Name == inbound.Name)
            {
                continue;
            }
            var urls = remote.Urls.Select(u => $"{u.Host}:{u.Port}").ToList();
            if (urls.Count > 0)
            {
                inbound.Link.Outbound.Append(new ServerInfo
                {
                    ServerId = _server.ServerId,
                    Gateway = remote.Name,
                    GatewayUrls = urls,
                    GatewayCmd = GatewayCommand.Gossip,
                }.Render(spaceBeforeCrLf: false));
            }
        }
        foreach (var (_, interest) in _interest)
        {
            interest.SwitchToInterestOnly(inbound);
        }
    }

    /// <summary>A gateway another server told us about (gossip on an outbound, or over a route).</summary>
    public void OnGossip(string name, List<string>? urls)
    {
        if (Options.RejectUnknown && !IsConfigured(name))
        {
            return;
        }
        ProcessImplicit(name, urls);
    }

    /// <summary>Go's processImplicitGateway: an outbound to a cluster we do not know yet.</summary>
    private void ProcessImplicit(string name, List<string>? urls)
    {
        if (string.IsNullOrEmpty(name) || name == Name)
        {
            return;
        }
        lock (_sync)
        {
            if (_remotes.ContainsKey(name) || _links.IsStopping)
            {
                return;
            }
            var state = new GatewayRemoteState(this, name, [], implicitRemote: true, _logger);
            state.AddUrls(urls ?? []);
            _remotes[name] = state;
            _links.Track(state.Start(TimeSpan.Zero, _links.Stopping));
        }
    }

    public void ForgetImplicit(GatewayRemoteState remote)
    {
        lock (_sync)
        {
            if (_remotes.TryGetValue(remote.Name, out var current) && ReferenceEquals(current, remote))
            {
                _remotes.Remove(remote.Name);
            }
        }
    }

    /// <summary>Go's forwardNewGatewayToLocalCluster: our routes learn the gateway so every server dials it.</summary>
    public void ForwardToCluster(ServerInfo info)
    {
        if (_server.Cluster is not { } cluster)
        {
            return;
        }
        var line = new ServerInfo
        {
            ServerId = "GW" + _server.ServerId,
            ServerName = _server.ServerName,
            Gateway = info.Gateway,
            GatewayUrls = info.GatewayUrls,
            GatewayCmd = GatewayCommand.Gossip,
        }.Render(spaceBeforeCrLf: false);
        foreach (var route in cluster.Table.Registered)
        {
            route.Outbound.Append(line);
        }
    }

    /// <summary>Go's shouldMapReplyForGatewaySend: a reply our cluster subscribed to in the last 2 s.</summary>
    public bool ShouldMapReply(ReadOnlySpan<byte> account, ReadOnlySpan<byte> reply)
    {
        foreach (var (name, interest) in _interest)
        {
            if (name.AsSpan().SequenceEqual(account))
            {
                return interest.IsRecent(reply);
            }
        }
        return false;
    }

    /// <summary>A message from an inbound gateway: a reply routed to this cluster (<c>_GR_.</c>) goes to the server it names;
    /// anything else to our subscribers, routes and leaf connections, with a routed reply shown bare (and remembered).</summary>
    public void Receive(GatewayConnection source, Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message)
    {
        var router = source.Link.Proxy.Router;
        if (subject.Length > SubjectOffset && subject.StartsWith(ReplyPrefixStart))
        {
            if (!subject.Slice(5, GatewayHash.Length).SequenceEqual(ClusterHash))
            {
                return;
            }
            var serverHash = subject.Slice(5 + GatewayHash.Length + 1, GatewayHash.Length);
            if (!serverHash.SequenceEqual(ServerHash) && RouteByHash(serverHash) is { } route)
            {
                route.SendMessage(account.NameUtf8, subject, reply, default, headerSize, message, source.Link.Proxy);
                return;
            }
            router.RouteFromPeer(account, subject[SubjectOffset..], reply, queues, headerSize, message, source);
            return;
        }
        if (reply.Length > SubjectOffset && reply.StartsWith(ReplyPrefixStart))
        {
            var bare = reply[SubjectOffset..];
            var map = account.GatewayReplies;
            if (map is null)
            {
                Interlocked.CompareExchange(ref account.GatewayReplies, new GatewayReplyMap(), null);
                map = account.GatewayReplies!;
            }
            map.Track(bare, reply);
            reply = bare;
        }
        router.RouteFromPeer(account, subject, reply, queues, headerSize, message, source);
    }

    /// <summary>Strips <c>_GR_.&lt;our cluster&gt;.&lt;server&gt;.</c> from a routed message's subject (a reply a gateway
    /// handed to a server of our cluster for this one).</summary>
    public bool TryStripRoutedReply(ReadOnlySpan<byte> subject, out ReadOnlySpan<byte> bare)
    {
        bare = default;
        if (subject.Length <= SubjectOffset || !subject.StartsWith(ReplyPrefixStart) || !subject.Slice(5, GatewayHash.Length).SequenceEqual(ClusterHash))
        {
            return false;
        }
        bare = subject[SubjectOffset..];
        return true;
    }

    private RouteConnection? RouteByHash(ReadOnlySpan<byte> hash)
    {
        if (_server.Cluster is not { } cluster)
        {
            return null;
        }
        foreach (var route in cluster.Table.Registered)
        {
            if (GatewayHash.Of(route.RemoteId).AsSpan().SequenceEqual(hash))
            {
                return route;
            }
        }
        return null;
    }

    /// <summary>A responder answered a request that came over a gateway: straight back to the gateway whose cluster the
    /// routed reply names (Go's handleGWReplyMap), whatever that cluster's interest.</summary>
    public void SendDirect(ReadOnlySpan<byte> account, byte[] routed, ReadOnlySpan<byte> reply, int headerSize, ReadOnlySpan<byte> message,
        Delivery.MessageOrigin publisher)
    {
        var hash = routed.AsSpan(5, GatewayHash.Length);
        foreach (var outbound in _outboundList)
        {
            if (outbound.Remote!.Hash.AsSpan().SequenceEqual(hash))
            {
                outbound.Link.SendMessage(account, routed, reply, default, headerSize, message, outbound.PeerHeaders, publisher);
                return;
            }
        }
    }

    /// <summary>The accounts switched to interest-only on an inbound connection (/gatewayz).</summary>
    public List<string> InterestOnlyAccounts(GatewayConnection inbound) =>
        [.. _interest.Where(i => i.Interest.IsInterestOnly(inbound)).Select(i => System.Text.Encoding.UTF8.GetString(i.Name))];

    public void OnClosed(GatewayConnection connection)
    {
        _links.Remove(connection);
        lock (_sync)
        {
            if (connection.IsOutbound && _outbound.TryGetValue(connection.Name, out var current) && ReferenceEquals(current, connection))
            {
                _outbound.Remove(connection.Name);
                _outboundList = [.. _outbound.Values];
            }
            if (!connection.IsOutbound)
            {
                _inbound = [.. _inbound.Where(c => !ReferenceEquals(c, connection))];
            }
        }
        if (!connection.IsOutbound)
        {
            foreach (var (_, interest) in _interest)
            {
                interest.Forget(connection);
            }
        }
    }

    public Task ShutdownAsync() => _links.ShutdownAsync(() => _listener?.StopAsync() ?? Task.CompletedTask);
}
