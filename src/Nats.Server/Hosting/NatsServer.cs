using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Accounts;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Monitoring;
using Nats.Server.Protocol;
using Nats.Server.Transport;

namespace Nats.Server.Hosting;

/// <summary>The server: owns the listener, the clients, the accounts and the heartbeat.</summary>
internal sealed partial class NatsServer : IAsyncDisposable
{
    /// <summary>The Go server feature level reported in INFO "version" (see <see cref="ServerVersion"/>).</summary>
    public const string FeatureLevelVersion = ServerVersion.ProtocolVersion;

    private readonly ILogger _logger;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _clientLogger;
    private readonly ConcurrentDictionary<ulong, ClientConnection> _clients = new();
    private readonly ConcurrentDictionary<ulong, Task> _clientTasks = new();
    private readonly AccountRegistry _accounts;
    private readonly CancellationTokenSource _shutdown = new();
    private readonly ConnectionHistory _history;
    private readonly ClientAdmission _admission;
    private MonitoringServer? _monitoring;
    private Socket? _listener;
    private Task? _acceptLoop;
    private Timer? _heartbeat;
    private IdleMemoryTrimmer? _trimmer;
    private volatile ClientInfoLine? _info;
    private volatile ServerOptions _options;
    private volatile IClientAuthenticator _authenticator;
    private long _nextClientId;
    private long _nextBatchId;
    private long _slowConsumers;
    private long _totalConnections;
    private int _shuttingDown;

    public NatsServer(ServerOptions options, ILoggerFactory? loggerFactory = null)
    {
        _options = options;
        _loggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
        _logger = _loggerFactory.CreateLogger("nats-server");
        _clientLogger = _loggerFactory.CreateLogger("nats-server.client");
        // The auth callout signs its requests with the server's nkey, whose public key is then the server id (as in Go).
        // In operator mode any account JWT may turn a callout on at run time.
        ServerKey = options.AuthCallout is not null || options.Operator.Enabled ? NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.Server) : null;
        ServerId = ServerKey?.GetPublicKey() ?? NewServerId();
        ServerName = string.IsNullOrEmpty(options.ServerName) ? ServerId : options.ServerName;
        _accounts = new AccountRegistry(options, _logger);
        _authenticator = WithCallout(_accounts.Operator is not null
            ? new Auth.Jwt.JwtAuthenticator(_accounts, options.Operator, _clientLogger)
            : new OptionsAuthenticator(options, _accounts.GeneratedNoAuthUser), options);
        AccountExpiry = _accounts.Operator is not null ? new Auth.Jwt.AccountExpiry(this, _accounts) : null;
        ClaimUpdates = Auth.Jwt.AccountClaimsUpdates.For(this, _accounts, options.Operator, _logger);
        _history = new ConnectionHistory(options.MaxClosedClients > 0 ? options.MaxClosedClients : ConnectionHistory.DefaultMaxClosedClients);
        // Invalid mappings throw MappingException here; a configuration file reports them at load time.
        _accounts.Global.Mappings = Mappings.SubjectMapper.Create(options.Mappings);
        Documents = new ServerDocuments(this, new ProcessUsage(), HttpRequestStats);
        _admission = new ClientAdmission(this, _accounts, _clients, _clientTasks, _loggerFactory);
    }

    /// <summary>The options in force; a configuration reload replaces the whole object.</summary>
    public ServerOptions Options => _options;

    public ILoggerFactory LoggerFactory => _loggerFactory;

    public string ServerId { get; }

    public string ServerName { get; }

    /// <summary>The port actually bound (differs from Options.Port when that was 0 or -1).</summary>
    public int Port { get; private set; }

    public DateTime StartTime { get; private set; }

    public bool AuthRequired => _authenticator.AuthRequired;

    public int ClientCount => _clients.Count;

    /// <summary>What max_connections limits: NATS and MQTT connections together, as in Go's one clients map.</summary>
    internal int ConnectionCountForLimit => _clients.Count + (Mqtt?.ConnectionCount ?? 0);

    public long TotalConnections => Interlocked.Read(ref _totalConnections);

    public long SlowConsumers => Interlocked.Read(ref _slowConsumers);

    /// <summary>Our own build, as opposed to the Go feature level in <see cref="FeatureLevelVersion"/>.</summary>
    public static string BuildVersion => ServerVersion.BuildVersion;

    /// <summary>The bound monitoring (HTTP) port; 0 when monitoring is off. Options.HttpPort -1 picks a free port, like Go.</summary>
    public int MonitoringPort => _monitoring?.Port ?? 0;

    internal Account GlobalAccount => _accounts.Global;

    /// <summary>The system account ($SYS unless configured otherwise); null with no_system_account.</summary>
    internal Account? SystemAccount => _accounts.System;

    /// <summary>Every account, sorted by name.</summary>
    internal IEnumerable<Account> Accounts => _accounts.All;

    internal Account? FindAccount(string name) => _accounts.Find(name);

    /// <summary>Go's LookupAccount: a known account or (operator mode) one fetched from the resolver; else null and why.</summary>
    internal Account? LookupAccount(string name, out string? error) => _accounts.Lookup(name, out error);

    /// <summary>The INFO a client gets again when its limits differ from the server's (no nonce: the challenge is over).</summary>
    internal byte[] RenderClientInfo(ulong clientId, string clientIp, int maxPayload) => _info!.RenderForClient(clientId, clientIp, null, maxPayload);

    internal ConnectionHistory History => _history;

    /// <summary>Counters of the HTTP monitor's paths (reported in /varz, also over $SYS).</summary>
    internal RequestStats HttpRequestStats { get; } = new();

    /// <summary>The monitoring documents, shared by the HTTP monitor and the $SYS request services.</summary>
    internal ServerDocuments Documents { get; }

    /// <summary>The system account's internal client, requests and events; null with no_system_account.</summary>
    internal SystemAccountService? SystemEvents { get; private set; }

    /// <summary>The server's own nkey; only made when something signs with it (the auth callout).</summary>
    internal NATS.NKeys.KeyPair? ServerKey { get; }

    private Auth.Callout.AuthCallout? _authCallout;

    /// <summary>
    /// Wraps the authenticator in the auth callout: in operator mode always (account JWTs switch it on),
    /// in server configuration mode when an auth_callout block is configured.
    /// </summary>
    private IClientAuthenticator WithCallout(IClientAuthenticator inner, ServerOptions options)
    {
        if (ServerKey is null)
        {
            return inner;
        }
        if (inner is Auth.Jwt.JwtAuthenticator jwt)
        {
            _authCallout ??= new Auth.Callout.AuthCallout(this, ServerKey, _logger);
            return new Auth.Callout.AccountCalloutAuthenticator(jwt, _authCallout, this);
        }
        if (options.AuthCallout is not { } callout || _accounts.Operator is not null)
        {
            return inner;
        }
        _authCallout ??= new Auth.Callout.AuthCallout(this, ServerKey, _logger);
        return new Auth.Callout.AuthCalloutAuthenticator(inner, _authCallout, callout, this);
    }

    /// <summary>Operator mode's account and activation expiry, run on the heartbeat; null otherwise.</summary>
    internal Auth.Jwt.AccountExpiry? AccountExpiry { get; }

    /// <summary>The full resolver's claim services; null unless operator mode runs a full resolver.</summary>
    internal Auth.Jwt.AccountClaimsUpdates? ClaimUpdates { get; }

    /// <summary>The MQTT listener when an mqtt block sets a port, else null.</summary>
    internal Mqtt.MqttServer? Mqtt { get; private set; }

    /// <summary>The bound MQTT port (0 when MQTT is off).</summary>
    public int MqttPort => Mqtt?.Port ?? 0;

    /// <summary>Routes to the other servers of the cluster when a cluster port is configured, else null.</summary>
    internal Routes.ClusterService? Cluster { get; private set; }

    /// <summary>Go's cachedClusterName: the cluster's name (adopted when dynamic), else the gateway's; null when neither.</summary>
    internal string? EventClusterName => Cluster?.ClusterName ?? (string.IsNullOrEmpty(Options.Gateway.Name) ? null : Options.Gateway.Name);

    /// <summary>Leaf node connections (both roles), when <c>leafnodes {}</c> is configured.</summary>
    internal LeafNodes.LeafNodeService? LeafNodes { get; private set; }

    internal Gateways.GatewayService? Gateways { get; private set; }

    /// <summary>The bound leaf node port (0 when not listening).</summary>
    public int LeafNodePort => LeafNodes?.Port ?? 0;

    /// <summary>Leaf connections past their handshake.</summary>
    public int LeafNodeCount => LeafNodes?.Registered.Length ?? 0;

    /// <summary>The bound route port (0 without clustering).</summary>
    public int ClusterPort => Cluster?.Port ?? 0;

    /// <summary>Registered routes right now.</summary>
    public int RouteCount => Cluster?.Table.Registered.Length ?? 0;

    // The client URLs of this server and its peers (INFO connect_urls); null until a peer advertised any.
    private volatile string[]? _clusterConnectUrls;

    /// <summary>
    /// Peers came or went: clients get the cluster's client URLs in a new INFO (Go's
    /// updateServerINFOAndSendINFOToClients), so they can fail over to the other servers.
    /// </summary>
    internal void SetClusterConnectUrls(string[] urls)
    {
        _clusterConnectUrls = urls;
        if (_info is null)
        {
            return;
        }
        var info = new ClientInfoLine(BuildInfo(Options, _authenticator));
        _info = info;
        if (IsShuttingDown)
        {
            // Go's sendAsyncInfoToClients: our routes close before our clients, and an INFO without the peers' URLs would
            // make clients forget the very servers they are about to fail over to.
            return;
        }
        foreach (var client in _clients.Values)
        {
            client.Reload.TrySendAsyncInfo(info.RenderForClient(client.Id, client.RemoteIp));
        }
    }

    /// <summary>JetStream when enabled (-js or a jetstream block), else null.</summary>
    internal JetStream.JetStreamService? JetStream { get; private set; }

    internal bool IsShuttingDown => Volatile.Read(ref _shuttingDown) == 1;

    /// <summary>The client listener is accepting (what /healthz checks, like Go's readyForConnections).</summary>
    internal bool IsReadyForConnections => _acceptLoop is not null && !IsShuttingDown && !IsLameDuckMode;

    internal IEnumerable<ClientConnection> Clients => _clients.Values;

    // How long clients wait for the explicit routes' first try (see ClusterService.InitialRoutesAsync).
    private static readonly TimeSpan InitialRoutesLimit = TimeSpan.FromSeconds(2);

    /// <summary>Binds the listener and starts accepting clients; returns once the port is bound.</summary>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        StartTime = DateTime.UtcNow;
        ConfigLoadTime = StartTime;
        // The first TLS handshake is warmed up alongside the rest of the start, and done before any client can connect.
        var warmUp = Options.TlsContext is { } tls ? Task.Run(() => Tls.TlsWarmUp.RunAsync(tls, _logger), CancellationToken.None) : Task.CompletedTask;
        _logger.LogInformation("Starting nats-server");
        _logger.LogInformation("  Version:  {Version} (nats-net-server {Build}, .NET {Runtime})", FeatureLevelVersion, BuildVersion, Environment.Version);
        _logger.LogInformation("  Git:      [not set]");
        if (Options.Cluster.Enabled && !string.IsNullOrEmpty(Options.Cluster.Name))
        {
            _logger.LogInformation("  Cluster:  {Cluster}", Options.Cluster.Name);
        }
        _logger.LogInformation("  Name:     {Name}", ServerName);
        _logger.LogInformation("  ID:       {Id}", ServerId);
        if (!string.IsNullOrEmpty(Options.ConfigFile))
        {
            _logger.LogInformation("Using configuration file: {File}", Options.ConfigFile);
        }

        if (Options.HttpPort != 0 || Options.HttpsPort != 0)
        {
            // Like Go, the monitor comes up before the client listener.
            var monitoring = new MonitoringServer(this, _loggerFactory);
            await monitoring.StartAsync(cancellationToken).ConfigureAwait(false);
            _monitoring = monitoring;
        }

        var address = ResolveListenAddress(Options.Host);
        var listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (address.Equals(IPAddress.IPv6Any))
        {
            listener.DualMode = true;
        }
        // A taken port is fatal, as in Go (see ListenerSocket).
        Transport.ListenerSocket.AllowRebindOverTimeWait(listener);
        var port = Options.Port < 0 ? 0 : Options.Port;
        try
        {
            // Bound and listening now (the port goes into INFO and the route INFO's connect_urls): a client that dials while the
            // routes have their first try waits in the backlog and is accepted below, with the peers in its first INFO. A
            // refused dial would instead fail a client (or a start-up probe such as nats.c's) that gives a start 2 s.
            listener.Bind(new IPEndPoint(address, port));
            listener.Listen(1024);
        }
        catch (Exception e)
        {
            listener.Dispose();
            if (_monitoring is not null)
            {
                await _monitoring.DisposeAsync().ConfigureAwait(false);
                _monitoring = null;
            }
            if (e is SocketException)
            {
                var host = FormatHost(string.IsNullOrEmpty(Options.Host) ? "0.0.0.0" : Options.Host);
                throw new ListenFailedException(
                    $"Error listening on port: {host}:{port}, \"{ListenFailedException.ListenError(Options.Host, port, e)}\"", e);
            }
            throw;
        }
        _listener = listener;
        Port = ((IPEndPoint)listener.LocalEndPoint!).Port;

        _info = new ClientInfoLine(BuildInfo(Options, _authenticator));
        await StartWebSocketAsync(cancellationToken).ConfigureAwait(false);

        if (SystemAccount is { } system)
        {
            // Like Go's setSystemAccount, the internal client takes the first client id.
            var events = new SystemAccountService(this, system, Documents, _logger);
            events.Start((ulong)Interlocked.Increment(ref _nextClientId));
            SystemEvents = events;
        }

        if (Options.JetStream.Enabled)
        {
            var jetStream = new JetStream.JetStreamService(this, Options.JetStream, _loggerFactory.CreateLogger("nats-server.jetstream"));
            try
            {
                jetStream.Start(_accounts.All, _accounts.Global);
                _accounts.Registered += jetStream.AddAccount;
            }
            catch
            {
                jetStream.Dispose(); // releases the store lock for the next attempt
                throw;
            }
            JetStream = jetStream;
        }

        if (Options.Mqtt.Enabled)
        {
            var mqtt = new Mqtt.MqttServer(this, _loggerFactory);
            mqtt.Start();
            Mqtt = mqtt;
        }

        try
        {
            if (Options.Gateway.Enabled)
            {
                // Before routing, as Go: the route INFO carries our gateway URL.
                var gateways = new Gateways.GatewayService(this, Options.Gateway, _loggerFactory.CreateLogger("nats-server.gateway"));
                Gateways = gateways;
                gateways.Start();
            }
            if (Options.LeafNodes.Enabled)
            {
                // Bound before "Server is ready", as Go: whoever waits for that line may dial every port the server has.
                var leafNodes = new LeafNodes.LeafNodeService(this, Options.LeafNodes, _loggerFactory.CreateLogger("nats-server.leafnode"));
                LeafNodes = leafNodes;
                leafNodes.Listen();
            }
        }
        catch
        {
            // A taken gateway or leaf port fails the start; what already runs is stopped, not leaked to an embedder.
            await ShutdownAsync().ConfigureAwait(false);
            throw;
        }

        if (Options.Cluster.Enabled)
        {
            // Like Go's StartRouting, after the client port is bound (its URL goes into the route INFO).
            var cluster = new Routes.ClusterService(this, Options.Cluster, _loggerFactory.CreateLogger("nats-server.route"));
            cluster.Start();
            Cluster = cluster;
        }

        // Leaf connections are accepted and dialled after routing: a hub's cluster name is known before any leaf connects.
        LeafNodes?.Start();

        if (Cluster is { } routes)
        {
            await routes.InitialRoutesAsync(InitialRoutesLimit).ConfigureAwait(false);
            if (IsShuttingDown)
            {
                return;
            }
        }
        await warmUp.ConfigureAwait(false);
        // Logged once clients are accepted (Go logs them before it starts routing, which is done in a millisecond).
        _logger.LogInformation("Listening for client connections on {Host}:{Port}", FormatHost(Options.Host), Port);
        if (Options.TlsContext is not null)
        {
            _logger.LogInformation("TLS required for client connections");
        }
        _logger.LogInformation("Server is ready");
        _acceptLoop = Task.Run(AcceptLoopAsync, CancellationToken.None);
        var tick = HeartbeatInterval();
        _heartbeat = new Timer(_ => Heartbeat(), null, tick, tick);
        if (TrimMemoryWhenIdle)
        {
            _trimmer = new IdleMemoryTrimmer(TrafficActivity, _logger);
        }
    }

    /// <summary>Return memory to the system after bursts (<see cref="IdleMemoryTrimmer"/>); the executable sets it.</summary>
    public bool TrimMemoryWhenIdle { get; init; }

    /// <summary>Changes whenever bytes move or a connection comes or goes: the trimmer's notion of "busy".</summary>
    private long TrafficActivity()
    {
        var sum = TotalConnections;
        foreach (var client in _clients.Values)
        {
            sum += Volatile.Read(ref client.InBytes) + client.OutBytes;
        }
        return sum + _clients.Count;
    }

    /// <summary>Stops accepting, flushes and closes every client.</summary>
    public async Task ShutdownAsync()
    {
        if (Interlocked.Exchange(ref _shuttingDown, 1) == 1)
        {
            return;
        }
        _logger.LogInformation("Initiating Shutdown...");
        _shutdown.Cancel();
        _lameDuckCancel.Cancel();
        _heartbeat?.Dispose();
        _trimmer?.Dispose();
        _listener?.Close();
        if (_acceptLoop is not null)
        {
            await _acceptLoop.ConfigureAwait(false);
        }
        if (JetStream?.Meta is { } meta)
        {
            // Go's stepdownRaftNodes: leaders hand over while the routes still carry the transfer.
            await meta.StepDownLeadersAsync().ConfigureAwait(false);
        }
        if (SystemEvents is { } events)
        {
            // Go's shutdownEventing: the SHUTDOWN event goes out before the clients (and routes) are closed.
            await events.ShutdownAsync().ConfigureAwait(false);
        }
        if (LeafNodes is { } leafNodes)
        {
            await leafNodes.ShutdownAsync().ConfigureAwait(false);
        }
        if (Gateways is { } gateways)
        {
            await gateways.ShutdownAsync().ConfigureAwait(false);
        }
        if (Cluster is { } cluster)
        {
            await cluster.ShutdownAsync().ConfigureAwait(false);
        }
        foreach (var client in _clients.Values)
        {
            client.CloseConnection(ClosedReason.ServerShutdown);
        }
        if (Mqtt is { } mqttServer)
        {
            await mqttServer.DisposeAsync().ConfigureAwait(false);
        }
        var pending = _clientTasks.Values.ToArray();
        await Task.WhenAny(Task.WhenAll(pending), Task.Delay(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
        await StopWebSocketAsync().ConfigureAwait(false);
        JetStream?.Dispose();
        _accounts.StopTimers();
        // Steady-state message paths are meant to allocate nothing; this line makes that checkable.
        _logger.LogDebug("Runtime totals: allocated {Allocated} bytes, GC gen0 {Gen0}, gen1 {Gen1}, gen2 {Gen2}",
            GC.GetTotalAllocatedBytes(), GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2));
        if (_monitoring is not null)
        {
            await _monitoring.DisposeAsync().ConfigureAwait(false);
        }
        _logger.LogInformation("Server Exiting..");
        _stopped.TrySetResult();
    }

    public async ValueTask DisposeAsync() => await ShutdownAsync().ConfigureAwait(false);

    internal long NextBatchId() => Interlocked.Increment(ref _nextBatchId);

    internal void RecordSlowConsumer() => Interlocked.Increment(ref _slowConsumers);

    /// <summary>
    /// A new internal publisher for a subsystem (see <see cref="Delivery.InternalPublisher"/>), with a
    /// client id of its own, as Go gives each internal client one.
    /// </summary>
    internal Delivery.InternalPublisher CreateInternalPublisher() => new(new Delivery.MessageOrigin(this, NextClientId()));

    private long _stalls;
    private long _fastProducerDrops;

    /// <summary>Times a publisher was paused behind a subscriber's full queue (Go 2.11's stalled_clients).</summary>
    public long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Messages dropped for a full subscriber under no_fast_producer_stall.</summary>
    public long FastProducerDrops => Interlocked.Read(ref _fastProducerDrops);

    internal void RecordStall() => Interlocked.Increment(ref _stalls);

    internal void RecordFastProducerDrop() => Interlocked.Increment(ref _fastProducerDrops);

    internal IClientAuthenticator Authenticator => _authenticator;

    /// <summary>WebSocket clients use the websocket {} block's credentials when it sets any (Go's authOverride).</summary>
    internal IClientAuthenticator AuthenticatorFor(ClientTransport transport) =>
        transport.IsWebSocket && _webSocketAuthenticator is { } ws ? ws : _authenticator;

    internal void LogRemovedSubscription(string quotedSubject, string quotedSid, string user) =>
        _logger.LogInformation("Removed sub {Subject} (sid {Sid}) for {User} - not authorized", quotedSubject, quotedSid, user);

    internal void OnClientClosed(ClientConnection client)
    {
        // Built outside the lock; moving from live to closed is atomic for the totals in /varz.
        var closed = ConnectionSnapshot.CaptureClosed(client);
        var released = false;
        lock (_history.SyncRoot)
        {
            if (_clients.TryRemove(client.Id, out _))
            {
                client.ReleaseAccount();
                released = true;
            }
            _history.AddLocked(closed);
        }
        if (released && SystemEvents is { } events)
        {
            // Go's order: the account's connection count first, then the disconnect advisory.
            events.ClientLeftAccount(client.Account);
            events.ClientDisconnected(client);
        }
        _logger.LogDebug("{Client} - Client connection closed: {Reason}", client, client.ClosedReason.ToText());
    }

    /// <summary>An MQTT connection ended: kept in the closed-connection history like a client (Go keeps both in one ring).</summary>
    internal void OnMqttClosed(Mqtt.MqttConnection connection)
    {
        var closed = Nats.Server.Mqtt.MqttMonitoring.CaptureClosed(connection, DateTime.UtcNow);
        lock (_history.SyncRoot)
        {
            _history.AddLocked(closed);
        }
        _logger.LogDebug("{Client} - Client connection closed: {Reason}", connection, connection.ClosedReason.ToText());
    }

    private Task AcceptLoopAsync() =>
        AcceptLoop.RunAsync(_listener!, AcceptClient, () => IsLameDuckMode, _logger, _shutdown.Token);

    private void AcceptClient(Socket socket) =>
        AdmitClient(Options.TlsContext is { } tls ? new TlsTransport(socket, tls, _clientLogger, Options.AllowNonTls) : new SocketTransport(socket));

    internal ulong NextClientId() => (ulong)Interlocked.Increment(ref _nextClientId);

    internal void CountConnection() => Interlocked.Increment(ref _totalConnections);

    /// <summary>The INFO line for a new client: the current server INFO (WebSocket clients get theirs) with its id, address and nonce.</summary>
    internal byte[] RenderInfo(ClientTransport transport, ulong clientId, string clientIp, string? nonce) =>
        (transport.IsWebSocket && _webSocketInfo is { } ws ? ws : _info!).RenderForClient(clientId, clientIp, nonce);

    /// <summary>Admits a connection a listener other than the client port accepted (WebSocket).</summary>
    internal ClientConnection AdmitClient(ClientTransport transport) => _admission.Admit(transport);

    /// <summary>Admits an MQTT connection (the MQTT port, or the websocket listener's /mqtt path) by the same door.</summary>
    internal Mqtt.MqttConnection AdmitMqtt(ClientTransport transport, Mqtt.MqttServer mqtt) => _admission.AdmitMqtt(transport, mqtt);

    private Protocol.ServerInfo BuildInfo(ServerOptions options, IClientAuthenticator authenticator) => new()
    {
        ServerId = ServerId,
        ServerName = ServerName,
        Version = FeatureLevelVersion,
        Proto = 1,
        Go = "dotnet" + Environment.Version,
        Host = options.Host,
        Port = Port,
        Headers = !options.NoHeaderSupport,
        AuthRequired = authenticator.AdvertiseAuthRequired,
        // Go: with allow_non_tls, tls_required gives way to tls_available (handshake_first keeps it required).
        TlsRequired = options.TlsContext is not null && (!options.AllowNonTls || options.TlsContext.Options.HandshakeFirst),
        TlsAvailable = options.TlsContext is not null && options.AllowNonTls && !options.TlsContext.Options.HandshakeFirst,
        TlsVerify = options.TlsContext?.Verify == true,
        MaxPayload = options.MaxPayload,
        JetStream = options.JetStream.Enabled,
        Domain = options.JetStream.Enabled && options.JetStream.Domain != "" ? options.JetStream.Domain : null,
        ConnectUrls = _clusterConnectUrls is { Length: > 0 } urls ? [.. urls] : null,
    };

    private void Heartbeat()
    {
        // The heartbeat is the server's one timer; routes run their own checks on the cluster's tick.
        var now = Environment.TickCount64;
        foreach (var client in _clients.Values)
        {
            client.OnHeartbeat(now);
        }
        Mqtt?.OnHeartbeat(now);
        AccountExpiry?.Check();
    }

    private TimeSpan HeartbeatInterval()
    {
        var shortest = new[] { Options.PingInterval, Options.AuthTimeout, Options.WriteDeadline, Options.Mqtt.AuthTimeout, TimeSpan.FromSeconds(2) }
            .Where(t => t > TimeSpan.Zero)
            .Min();
        var tick = shortest / 4;
        return tick < TimeSpan.FromMilliseconds(25) ? TimeSpan.FromMilliseconds(25)
            : tick > TimeSpan.FromSeconds(1) ? TimeSpan.FromSeconds(1)
            : tick;
    }

    private static IPAddress ResolveListenAddress(string host)
    {
        if (string.IsNullOrEmpty(host) || host == "0.0.0.0" || host == "*")
        {
            return IPAddress.Any;
        }
        if (host == "::" || host == "[::]")
        {
            return IPAddress.IPv6Any;
        }
        if (IPAddress.TryParse(host.Trim('[', ']'), out var address))
        {
            return address;
        }
        return Dns.GetHostAddresses(host).First();
    }

    private static string FormatHost(string host) => host.Contains(':') && !host.StartsWith('[') ? $"[{host}]" : host;

    private static string NewServerId()
    {
        // Same shape as the Go server's id (an nkey public key): 'N' and 55 base32 characters.
        const string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        Span<char> id = stackalloc char[56];
        id[0] = 'N';
        for (var i = 1; i < id.Length; i++)
        {
            id[i] = alphabet[Random.Shared.Next(alphabet.Length)];
        }
        return new string(id);
    }
}
