using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Routes;

namespace Nats.Server.LeafNodes;

/// <summary>
/// The leaf node subsystem of one server (Go's leafnode.go at server level): the leaf port and its INFO, the
/// solicitors of the configured remotes, the connections (accepted and dialled), leaf authentication and
/// account binding, and one <see cref="LeafAccountInterest"/> per account that has leaf connections.
/// </summary>
internal sealed class LeafNodeService
{
    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly Lock _sync = new();
    private readonly Transport.LinkSet<LeafConnection> _links = new();
    private readonly Dictionary<Account, LeafAccountInterest> _interest = [];
    private readonly List<LeafSolicitor> _solicitors = [];
    private volatile LeafConnection[] _registered = [];
    private RouteListener? _listener;
    private string _host = "";
    private int _advertisedPort;

    public LeafNodeService(NatsServer server, LeafNodeOptions options, ILogger logger)
    {
        _server = server;
        Options = options;
        _logger = logger;
    }

    public NatsServer Server => _server;
    public LeafNodeOptions Options { get; }

    /// <summary>The bound leaf port; 0 when this server does not accept leaf connections.</summary>
    public int Port => _listener?.Port ?? 0;

    /// <summary>Leaf connections past their handshake.</summary>
    public LeafConnection[] Registered => _registered;

    public IReadOnlyList<LeafSolicitor> Solicitors => _solicitors;

    /// <summary>Our cluster's name as a leaf peer sees it: the route cluster's, or (Go, a server with remotes and
    /// no cluster) the server name, so that a spoke and its hub can tell each other apart.</summary>
    public string ClusterName =>
        _server.Cluster?.ClusterName ??
        (!string.IsNullOrEmpty(_server.Options.Cluster.Name) ? _server.Options.Cluster.Name
            : Options.Remotes.Count > 0 ? _server.ServerName : "");

    /// <summary>Binds the leaf port (a taken port fails the server's start), before the server says it is ready, as Go's
    /// startLeafNodeAcceptLoop does; nothing is accepted until <see cref="Start"/>.</summary>
    public void Listen()
    {
        if (Options.Listens)
        {
            _listener = new RouteListener(socket => StartConnection(socket, null, null), "leafnode", Options.Host, Options.Port, _logger);
            (_host, _advertisedPort) = AdvertisedAddress();
            _logger.LogInformation("Listening for leafnode connections on {Host}:{Port}",
                string.IsNullOrEmpty(Options.Host) ? "0.0.0.0" : Options.Host, _listener.Port);
        }
    }

    /// <summary>Accepts on the bound leaf port and dials the remotes: after routing has started, so that a hub's cluster
    /// name is settled before any leaf connects.</summary>
    public void Start()
    {
        if (_listener is { } listener)
        {
            listener.Start(_links.Stopping);
            if (Options.TlsContext is { Options.Insecure: true } || Options.Remotes.Any(r => r.TlsContext is { Options.Insecure: true }))
            {
                _logger.LogWarning("TLS certificate chain and hostname of solicited leafnodes will not be verified. DO NOT USE IN PRODUCTION!");
            }
        }
        foreach (var remote in Options.Remotes)
        {
            if (remote.Urls.Count == 0)
            {
                continue;
            }
            var solicitor = new LeafSolicitor(this, remote, _logger);
            lock (_sync)
            {
                _solicitors.Add(solicitor);
            }
            _links.Track(solicitor.Start(_links.Stopping));
        }
        _links.StartTicking();
    }

    public LeafConnection StartConnection(Socket socket, LeafSolicitor? solicitor, Uri? url) =>
        _links.Run(new LeafConnection(this, socket, _server.NextClientId(), solicitor, url, _logger));

    /// <summary>A leaf over WebSocket: dialled by a ws:// remote, or accepted on the websocket port's <c>/leafnode</c> path.</summary>
    public LeafConnection StartConnection(Transport.ClientTransport transport, IPEndPoint? remote, LeafSolicitor? solicitor, Uri? url) =>
        _links.Run(new LeafConnection(this, transport, remote, _server.NextClientId(), solicitor, url, _logger));

    /// <summary>Go's setLeafNodeInfoHostPortAndIP: the advertise address, else the listen host (any address resolved to
    /// the first non-loopback one).</summary>
    private (string Host, int Port) AdvertisedAddress()
    {
        var port = _listener!.Port;
        if (!string.IsNullOrEmpty(Options.Advertise))
        {
            var advertise = Options.Advertise;
            if (Configuration.ConfigRead.TrySplitHostPort(advertise, out var h, out var p) && int.TryParse(p, out var parsed))
            {
                return (h, parsed);
            }
            return (advertise, port);
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

    /// <summary>The hub's INFO (Go's copyLeafNodeInfo): the first with a nonce, the second (after CONNECT) with
    /// connect_info and the account the leaf was bound to.</summary>
    public byte[] BuildInfo(string? nonce, ulong clientId, bool connectInfo, string? remoteAccount)
    {
        var options = _server.Options;
        var hostPort = _host.Contains(':') ? $"[{_host}]:{_advertisedPort}" : $"{_host}:{_advertisedPort}";
        return new ServerInfo
        {
            ServerId = _server.ServerId,
            ServerName = _server.ServerName,
            Version = NatsServer.FeatureLevelVersion,
            Proto = 1,
            Go = "dotnet" + Environment.Version,
            Host = _host,
            Port = _advertisedPort,
            Headers = !options.NoHeaderSupport,
            // Go always asks a leaf for credentials: its CONNECT binds the account.
            AuthRequired = true,
            TlsRequired = Options.TlsContext is not null,
            TlsVerify = Options.TlsContext is { Verify: true },
            MaxPayload = options.MaxPayload,
            JetStream = options.JetStream.Enabled,
            Domain = options.JetStream.Domain,
            Ip = hostPort,
            ClientId = clientId,
            Nonce = nonce,
            InfoOnConnect = true,
            ConnectInfo = connectInfo,
            LeafNodeUrls = [hostPort],
            RemoteAccount = remoteAccount,
        }.Render();
    }

    /// <summary>
    /// Our CONNECT on a remote (Go's sendLeafConnect): the credentials file's JWT and nonce signature first, else the
    /// URL's user and password, else those of a configured URL; deny_imports travel as deny_pub. Null with Go's error
    /// text when the credentials file cannot be used.
    /// </summary>
    public byte[]? BuildConnect(LeafSolicitor solicitor, Uri? url, string? nonce, bool tlsRequired, out string? error)
    {
        var remote = solicitor.Remote;
        error = null;
        string? jwt = null, sig = null, user = null, pass = null;
        if (!string.IsNullOrEmpty(remote.Credentials))
        {
            _logger.LogDebug("Authenticating with credentials file \"{File}\"", remote.Credentials);
            (jwt, sig, error) = LeafCredentials.Sign(remote.Credentials, nonce);
            if (error is not null)
            {
                return null;
            }
        }
        else
        {
            (user, pass) = Transport.UrlCredentials.Of(url, solicitor.User, solicitor.Password);
        }
        var options = _server.Options;
        return new PeerConnect
        {
            Version = NatsServer.FeatureLevelVersion,
            Jwt = jwt,
            Sig = sig,
            User = user,
            Pass = pass,
            TlsRequired = tlsRequired,
            ServerId = _server.ServerId,
            Domain = options.JetStream.Domain,
            Name = _server.ServerName,
            Hub = remote.Hub,
            Cluster = ClusterName,
            Headers = !options.NoHeaderSupport,
            JetStream = options.JetStream.Enabled,
            DenyPub = remote.DenyImports.Count > 0 ? remote.DenyImports : null,
        }.RenderLeaf();
    }

    /// <summary>
    /// Go's isLeafNodeAuthorized: the <c>leafnodes.authorization</c> block when it names users, else the server's client
    /// authentication (operator mode: the user JWT and the nonce signature; users: a CONNECT naming one), else the
    /// leaf block's account. Returns the account the leaf binds to, or null when the credentials do not pass.
    /// </summary>
    public string? Authenticate(PeerConnect connect, string? nonce, string remoteIp, bool webSocket, LeafConnection connection)
    {
        if (string.IsNullOrEmpty(Options.Username) && Options.Users.Count > 0 && Options.TlsContext is { Options.Map: true })
        {
            return AuthenticateMappedLeafUser(connect, connection);
        }
        if (Options.Users.Count > 0 || !string.IsNullOrEmpty(Options.Username))
        {
            return AuthenticateLeafUser(connect.User, connect.Pass);
        }
        var authenticator = _server.Authenticator;
        var options = _server.Options;
        var named = !string.IsNullOrEmpty(connect.User) || !string.IsNullOrEmpty(connect.Jwt) || !string.IsNullOrEmpty(options.NoAuthUser);
        if (options.Operator.Enabled || (authenticator.AuthRequired && named && options.Users is { Count: > 0 }))
        {
            var request = new Auth.ClientAuthRequest(new ConnectOptions
            {
                Jwt = connect.Jwt,
                Sig = connect.Sig,
                User = connect.User,
                Pass = connect.Pass,
                AuthToken = connect.Token,
                Name = connect.Name,
            }, nonce, remoteIp, webSocket ? Auth.ConnectionTypes.LeafnodeWebsocket : Auth.ConnectionTypes.Leafnode);
            return authenticator.Authenticate(request)?.Account;
        }
        return AuthenticateLeafUser(connect.User, connect.Pass);
    }

    /// <summary>
    /// Go's isLeafNodeAuthorized with <c>verify_and_map</c>: the leaf's certificate names one of the leaf users (SAN emails,
    /// DNS names, URIs, then the subject with and without its DC components; Go's leaf lookup ignores the DN match), whose
    /// password (normally none) the CONNECT must still carry, and whose account the leaf binds to.
    /// </summary>
    private string? AuthenticateMappedLeafUser(PeerConnect connect, LeafConnection connection)
    {
        if (connection.Link.Tls?.PeerCertificate is not { } certificate)
        {
            return null;
        }
        var identity = Tls.CertificateIdentity.From(certificate);
        LeafUser? Find(string name) => Options.Users.FirstOrDefault(u => u.Username == name);
        var user = identity.SanNames.Select(Find).FirstOrDefault(u => u is not null)
            ?? (identity.DomainComponents.Length > 0 ? Find(identity.Subject + "," + identity.DomainComponents) : null)
            ?? Find(identity.Subject);
        if (user is null)
        {
            return null;
        }
        if (!string.IsNullOrEmpty(connect.User))
        {
            _logger.LogWarning("{Leaf} - User {User} found in connect proto, but user required from cert", connection, Auth.GoQuote.Quote(connect.User));
        }
        if (!PasswordMatches(user.Password, connect.Pass))
        {
            return null;
        }
        return string.IsNullOrEmpty(user.Account) ? Account.GlobalAccountName : user.Account;
    }

    private string? AuthenticateLeafUser(string? user, string? password)
    {
        if (Options.Users.Count > 0)
        {
            foreach (var candidate in Options.Users)
            {
                if (candidate.Username == user && PasswordMatches(candidate.Password, password))
                {
                    return string.IsNullOrEmpty(candidate.Account) ? Account.GlobalAccountName : candidate.Account;
                }
            }
            return null;
        }
        if (!string.IsNullOrEmpty(Options.Username))
        {
            if (Options.Username != user || !PasswordMatches(Options.Password ?? "", password))
            {
                return null;
            }
        }
        return string.IsNullOrEmpty(Options.Account) ? Account.GlobalAccountName : Options.Account;
    }

    private static bool PasswordMatches(string expected, string? given) =>
        Auth.Bcrypt.IsBcryptHash(expected) ? Auth.Bcrypt.Verify(given ?? "", expected) : expected == (given ?? "");

    public bool IsOwnLoopSubject(Account account, ReadOnlySpan<byte> subject)
    {
        if (!subject.StartsWith(LeafAccountInterest.LoopPrefix))
        {
            return false;
        }
        lock (_sync)
        {
            return _interest.TryGetValue(account, out var interest) && subject.SequenceEqual(interest.LoopSubjectUtf8);
        }
    }

    /// <summary>Go's addLeafNodeConnection duplicate check: an older accepted connection from the same server, cluster and
    /// account is replaced by the new one (a reconnect the hub has not noticed yet).</summary>
    public void EvictDuplicate(LeafConnection connection)
    {
        if (connection.RemoteServerName.Length == 0)
        {
            return;
        }
        foreach (var old in _registered)
        {
            if (!old.Solicited && !ReferenceEquals(old, connection) && old.RemoteServerName == connection.RemoteServerName &&
                old.RemoteCluster == connection.RemoteCluster && ReferenceEquals(old.Account, connection.Account))
            {
                old.Outbound.Append("-ERR 'Duplicate Remote LeafNode Connection'\r\n"u8);
                _logger.LogError("{Leaf} - Duplicate Remote LeafNode Connection", old);
                old.Close("Duplicate Remote LeafNode Connection");
                _logger.LogWarning("{Leaf} - Replacing connection from same server", connection);
            }
        }
    }

    /// <summary>The connection passed its handshake: it joins the account's interest (sending the initial LS+ batch).</summary>
    public void OnRegistered(LeafConnection connection)
    {
        var account = connection.Account!;
        LeafAccountInterest interest;
        lock (_sync)
        {
            if (!_interest.TryGetValue(account, out interest!))
            {
                interest = new LeafAccountInterest(account);
                _interest[account] = interest;
                account.SubList.AddObserver(interest);
            }
            _registered = [.. _registered, connection];
        }
        interest.Attach(connection);
    }

    public void OnClosed(LeafConnection connection)
    {
        LeafAccountInterest? interest = null;
        _links.Remove(connection);
        lock (_sync)
        {
            _registered = [.. _registered.Where(c => !ReferenceEquals(c, connection))];
            if (connection.Account is { } account)
            {
                _interest.TryGetValue(account, out interest);
            }
        }
        interest?.Detach(connection);
    }

    public Task ShutdownAsync() => _links.ShutdownAsync(() => _listener?.StopAsync() ?? Task.CompletedTask);
}
