using System.Net;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>
/// One client connection, a coordinator of single-concept parts (docs/ARCHITECTURE.md lists them):
/// it wires them together and decides policy between them (which -ERR to send, when to close). The
/// read loop (Read) parses in place and dispatches; a <see cref="PublishHandler"/> handles PUB and a
/// <see cref="Delivery.MessageRouter"/> routes it; <see cref="ClientSubscriptions"/> holds SUB state;
/// an <see cref="OutboundQueue"/> holds and writes what the client receives (Outbound); a
/// <see cref="FlushBatch"/> flushes the clients a read batch fed and a <see cref="StallList"/> pauses
/// the read loop behind full subscribers; <see cref="PingTimer"/>, <see cref="Auth.ConnectionAuth"/>,
/// <see cref="AccountMembership"/> and <see cref="ClientLimits"/> keep keepalive, identity, account and
/// limits. It is admitted by <see cref="Hosting.ClientAdmission"/>.
/// </summary>
internal sealed class ClientConnection
{
    private readonly NatsServer _server;
    private readonly ClientTransport _transport;
    private readonly ConnectionSettings _settings;
    private readonly ILogger _logger;
    private readonly ConnectOptions _connect = new();
    private readonly string _remoteAddress;
    private readonly PingTimer _ping;
    private readonly Auth.ConnectionAuth _auth;
    private readonly AccountMembership _membership;
    // Routes what this client (or the server, for the internal client) publishes.
    private readonly Nats.Server.Delivery.MessageRouter _router;
    private readonly PublishHandler _publish;
    private readonly ReadLoop _readLoop;
    private readonly OutboundQueue _outbound;
    private readonly ProtocolWriter _protocol;
    // Clients that received something during the current read batch, flushed once when it ends.
    private readonly FlushBatch _flushBatch;
    // Subscribers this publisher must wait for before it parses on (owned by its read loop).
    private readonly StallList _stalledOn = new();
    private readonly ClientSubscriptions _subscriptions = new();
    private ClosedReason _closedReason;
    // Tick by which CONNECT must have authenticated; 0 once it has (or when no auth is required).
    private long _authDeadlineTicks;

    public ClientConnection(NatsServer server, ClientTransport transport, ulong id, Account account, ILogger logger)
    {
        _server = server;
        _transport = transport;
        _outbound = new OutboundQueue(this, transport);
        _flushBatch = new FlushBatch(server);
        _protocol = new ProtocolWriter(this, _outbound, _flushBatch);
        _router = new Nats.Server.Delivery.MessageRouter(this);
        _settings = new ConnectionSettings(server.Options, server.AuthenticatorFor(transport).AuthRequired, logger.IsEnabled(LogLevel.Trace));
        _logger = logger;
        Id = id;
        _membership = new AccountMembership(account);
        _auth = new Auth.ConnectionAuth(logger, this);
        StartTime = DateTime.UtcNow;
        _ping = new PingTimer(Environment.TickCount64);
        var remote = transport.RemoteEndPoint as IPEndPoint;
        RemoteIp = remote?.Address.ToString() ?? "";
        RemotePort = remote?.Port ?? 0;
        _remoteAddress = remote is null ? "?" : $"{RemoteIp}:{RemotePort}";
        Delivery = new ClientDelivery(this, server, _settings, _auth, _outbound, logger);
        _publish = new PublishHandler(this, _connect, _auth, _router, _protocol);
        Reload = new ClientReload(this, server, _settings, _auth, _connect, _protocol, logger);
        var subscribe = new SubscribeHandler(this, _settings, _connect, _auth, _subscriptions, _outbound, _protocol, logger);
        var commands = new CommandDispatcher(this, server, _settings, _publish, subscribe, _ping, _outbound, _stalledOn, _protocol, logger);
        _readLoop = new ReadLoop(this, transport, commands, _settings, _ping, _outbound, _flushBatch, _stalledOn, logger);
    }

    public ulong Id { get; }

    /// <summary>What a configuration reload or lame duck mode does to this client.</summary>
    internal readonly ClientReload Reload;

    /// <summary>Delivery into this client on behalf of a publisher (the router's per-subscriber step).</summary>
    internal readonly ClientDelivery Delivery;

    /// <summary>Id of the publisher batch that last queued to this client; dedupes <see cref="FlushBatch"/>.</summary>
    internal long FlushMark;

    // The parts an internal publisher and the internal-client factory work with (InternalClient).
    internal ConnectionSettings Settings => _settings;
    internal Nats.Server.Delivery.MessageRouter Router => _router;
    internal OutboundQueue Outbound => _outbound;
    internal FlushBatch FlushBatch => _flushBatch;
    internal StallList StalledOn => _stalledOn;
    internal ClientSubscriptions Subscriptions => _subscriptions;
    public Account Account => _membership.Account;
    public DateTime StartTime { get; }
    public string RemoteIp { get; }
    public int RemotePort { get; }

    public string? Name => _connect.Name;
    public string? Lang => _connect.Lang;
    public string? Version => _connect.Version;

    /// <summary>Messages and bytes received from this client (owned by its read loop).</summary>
    public long InMsgs;
    public long InBytes;

    public long LastActivityTicks => _ping.LastActivityTicks;
    public int PingsOut => _ping.PingsOut;

    /// <summary>Latest round-trip estimate; zero until CONNECT.</summary>
    public TimeSpan Rtt => _ping.Rtt;

    /// <summary>The nonce sent in this client's INFO (nkey challenge), if any.</summary>
    internal string? Nonce
    {
        get => _auth.Nonce;
        set => _auth.Nonce = value;
    }

    /// <summary>Who the client authenticated as (null before CONNECT).</summary>
    internal Auth.AuthenticatedUser? AuthUser => _auth.User;

    /// <summary>The credential Go reports as authorized_user (getRawAuthUser): nkey, user, or token.</summary>
    public string? RawAuthUser => Auth.ConnectionAuth.RawAuthUser(_connect);

    /// <summary>Leaves the account's connection count once, when the connection is gone.</summary>
    internal void ReleaseAccount() => _membership.Release();

    /// <summary>Wall-clock time of the last read or write (the core keeps a cheap millisecond tick).</summary>
    public DateTime LastActivity
    {
        get
        {
            var idle = Environment.TickCount64 - LastActivityTicks;
            var last = DateTime.UtcNow - TimeSpan.FromMilliseconds(Math.Max(0, idle));
            return last < StartTime ? StartTime : last;
        }
    }

    /// <summary>Go's ClientInfo for a service request through an import of <paramref name="account"/>.</summary>
    internal byte[] RequestInfoJson(string account, bool share) =>
        new RequestInfo(account, share, StartTime, RemoteIp, Id, _connect.User ?? AuthUser?.Name, _connect.Name, _connect.Lang,
            _connect.Version, Rtt, _server.ServerName).ToJson();

    /// <summary>The TLS session for /connz (null on plain connections and before the handshake).</summary>
    internal Transport.TlsConnectionState? TlsState => _transport.Tls;

    public override string ToString() => $"{_remoteAddress} - cid:{Id}";

    /// <summary>Sends INFO and runs both loops until the connection ends.</summary>
    public async Task RunAsync(byte[] info, bool overConnectionLimit)
    {
        _protocol.Enqueue(info);
        SignalFlush();
        var writer = Task.Run(_outbound.RunWriteLoopAsync);
        if (overConnectionLimit)
        {
            // Go sends INFO first, then refuses the connection.
            _protocol.Enqueue(ErrorTexts.MaxConnectionsExceeded);
            CloseConnection(ClosedReason.MaxConnectionsExceeded);
        }
        else
        {
            _ping.ScheduleFirstPing(Environment.TickCount64, _settings.Options.PingInterval);
            if (_settings.AwaitingAuth)
            {
                _authDeadlineTicks = Environment.TickCount64 + (long)_settings.Options.AuthTimeout.TotalMilliseconds;
            }
            await _readLoop.RunAsync().ConfigureAwait(false);
        }
        await writer.ConfigureAwait(false);
    }

    internal void Trace(string direction, ReadOnlySpan<byte> op, ReadOnlySpan<byte> args)
    {
        _logger.LogTrace("{Client} - {Direction} [{Op}{Space}{Args}]", this, direction, Encoding.UTF8.GetString(op),
            args.IsEmpty ? "" : " ", Encoding.UTF8.GetString(args));
    }

    /// <summary>
    /// Time-driven checks, run by the server's single heartbeat rather than a timer per connection:
    /// authentication timeout, the write deadline, and server PINGs with stale-connection detection.
    /// </summary>
    internal void OnHeartbeat(long now)
    {
        if (IsClosed)
        {
            return;
        }
        var authDeadline = Volatile.Read(ref _authDeadlineTicks);
        if (authDeadline != 0 && _settings.AwaitingAuth && now >= authDeadline)
        {
            _logger.LogError("{Client} - Authentication Timeout", this);
            _protocol.SendNow(ErrorTexts.AuthenticationTimeout);
            CloseConnection(ClosedReason.AuthenticationTimeout);
            return;
        }

        var writeStarted = _outbound.WriteStartedTicks;
        if (writeStarted != 0 && now - writeStarted > (long)_settings.Options.WriteDeadline.TotalMilliseconds)
        {
            _server.RecordSlowConsumer();
            _logger.LogInformation("{Client} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, _settings.Options.WriteDeadline);
            CloseConnection(ClosedReason.SlowConsumerWriteDeadline);
            return;
        }

        switch (_ping.Check(now, _settings.Options.PingInterval, _settings.Options.MaxPingsOut))
        {
            case PingAction.Stale:
                _logger.LogDebug("{Client} - Stale Client Connection - Closing", this);
                _protocol.SendNow(ErrorTexts.StaleConnection);
                CloseConnection(ClosedReason.StaleConnection);
                break;
            case PingAction.SendPing:
                if (_settings.Trace)
                {
                    Trace("->>", "PING"u8, default);
                }
                _protocol.SendNow("PING\r\n"u8);
                break;
        }
    }

    public int SubscriptionCount => _subscriptions.Count;

    internal List<Subscription> SnapshotSubscriptions() => _subscriptions.Snapshot();

    /// <summary>Subscriptions removed when the connection closed, kept for the closed-connections list.</summary>
    internal IReadOnlyList<Subscription> SubscriptionsAtClose => _subscriptions.AtClose;

    public bool ConnectReceived => _settings.ConnectReceived;

    /// <summary>CONNECT {json} — mirrors processConnect in the Go server's client.go.</summary>
    internal void ProcessConnect(ReadOnlySpan<byte> json)
    {
        // Like Go's clearAuthTimer at the top of processConnect: a slow credential check (bcrypt)
        // must not be overtaken by the authentication timeout.
        Volatile.Write(ref _authDeadlineTicks, 0);
        if (!_connect.TryApply(json))
        {
            _logger.LogError("{Client} - invalid CONNECT: not a valid JSON object", this);
            CloseConnection(ClosedReason.ProtocolViolation);
            return;
        }
        _settings.ApplyConnect(_connect);

        var request = new Auth.ClientAuthRequest(_connect, _auth.Nonce, RemoteIp, _transport.ConnectionType)
        {
            PeerCertificate = _transport.Tls?.PeerCertificate,
        };
        if (!_auth.Authenticate(_server.AuthenticatorFor(_transport), request, _server.Options) || _connect.NewAccount || !string.IsNullOrEmpty(_connect.Account))
        {
            _logger.LogError("{Client} - authentication error - User \"{User}\"", this, _connect.User);
            _protocol.Enqueue(ErrorTexts.AuthorizationViolation);
            CloseConnection(ClosedReason.AuthenticationViolation);
            _server.SystemEvents?.AuthenticationFailed(this);
            return;
        }
        if (!BindAccount(_auth.User!.Account))
        {
            return;
        }
        ApplyAccountLimits();
        // Go sends the connect advisory from isClientAuthorized, before the remaining CONNECT checks.
        _server.SystemEvents?.ClientConnected(this);
        _settings.AwaitingAuth = false;
        _authDeadlineTicks = 0;

        if (_connect.Protocol is < 0 or > 1)
        {
            _protocol.Enqueue(ErrorTexts.InvalidClientProtocol);
            CloseConnection(ClosedReason.BadClientProtocolVersion);
            return;
        }
        if (_connect.NoResponders && !_settings.Headers)
        {
            _protocol.Enqueue(ErrorTexts.NoRespondersRequiresHeaders);
            CloseConnection(ClosedReason.NoRespondersRequiresHeaders);
            return;
        }
        // The first ping is re-armed from CONNECT, as the Go server does.
        _ping.ScheduleFirstPing(Environment.TickCount64, _settings.Options.PingInterval);
        if (_connect.Verbose)
        {
            _protocol.Enqueue("+OK\r\n"u8);
        }
    }

    /// <summary>Takes a subscription out of this client and the index (UNSUB, auto-unsubscribe).</summary>
    internal void RemoveSubscription(Subscription subscription) => _subscriptions.Remove(subscription, Account);

    /// <summary>
    /// Go's registerWithAccount: moves the client from $G to the account it authenticated into; false
    /// (after sending the error and closing) when that account is missing or at its connection limit.
    /// </summary>
    private bool BindAccount(string accountName)
    {
        var target = _server.FindAccount(accountName);
        if (target is null)
        {
            _logger.LogError("{Client} - Problem registering with account \"{Account}\": account missing", this, accountName);
            _protocol.Enqueue("-ERR 'Failed Account Registration'\r\n"u8);
            CloseConnection(ClosedReason.MissingAccount);
            return false;
        }
        switch (_membership.MoveTo(target))
        {
            case AccountMove.AlreadyThere:
                return true;
            case AccountMove.Released:
                return false;
            case AccountMove.TargetFull:
                // Still counted in the old account, which the close path releases.
                _logger.LogError("{Client} - maximum account active connections exceeded", this);
                _protocol.Enqueue("-ERR 'maximum account active connections exceeded'\r\n"u8);
                CloseConnection(ClosedReason.MaxAccountConnectionsExceeded);
                return false;
        }
        // The per-client match cache belongs to the old account's index.
        _publish.OnAccountChanged();
        _server.SystemEvents?.ClientJoinedAccount(target);
        return true;
    }

    /// <summary>The smaller of the server's and the account's limits apply (see <see cref="ClientLimits"/>).</summary>
    internal void ApplyAccountLimits()
    {
        var limits = ClientLimits.Compute(Account.Options.Limits, _settings.Options);
        if (limits.ServerOverridesPayload)
        {
            _logger.LogError("{Client} - Max Payload set to {Max} from server overrides account or user config", this, _settings.Options.MaxPayload);
        }
        if (limits.ServerOverridesSubscriptions)
        {
            _logger.LogError("{Client} - Max Subscriptions set to {Max} from server overrides account or user config", this, _settings.Options.MaxSubscriptions);
        }
        _settings.ApplyLimits(limits);
    }

    /// <summary>
    /// Go's processPing: a client speaking protocol 1 that sends its first PING after CONNECT gets a
    /// fresh INFO (right after that PONG, as Go writes it) when its max_payload differs from the server's (an account limit lowered it).
    /// </summary>
    internal void CheckInfoOnFirstPing()
    {
        if (_settings.FirstPongNeedsInfo(_connect.Protocol))
        {
            _protocol.Enqueue(_server.RenderClientInfo(Id, RemoteIp, _settings.MaxPayload));
        }
    }

    public bool IsClosed => _outbound.IsClosed;
    public ClosedReason ClosedReason => _closedReason;
    public DateTime? StopTime { get; private set; }

    public long PendingBytes => _outbound.PendingBytes;

    /// <summary>Messages and bytes queued to this client.</summary>
    public long OutMsgs => Volatile.Read(ref _outbound.OutMsgs);

    public long OutBytes => Volatile.Read(ref _outbound.OutBytes);

    /// <summary>Times this client's full queue paused a publisher.</summary>
    public long Stalls => Delivery.Stalls;

    /// <summary>Messages dropped for this client under no_fast_producer_stall.</summary>
    public long FastProducerDrops => Delivery.FastProducerDrops;

    internal void SignalFlush() => _outbound.SignalFlush();

    /// <summary>The write side made progress: counts as activity for the ping timer.</summary>
    internal void NoteWriteActivity() => _ping.NoteActivity(Environment.TickCount64);

    internal void OnWriteLoopFailed(Exception ex)
    {
        _logger.LogError(ex, "{Client} - Unexpected error in write loop", this);
        CloseConnection(ClosedReason.WriteError);
    }

    /// <summary>
    /// Ends the connection. Protocol errors flush what is queued (the -ERR) before the socket closes;
    /// slow consumers and broken sockets are cut at once. Safe to call from any thread, once or many times.
    /// </summary>
    internal void CloseConnection(ClosedReason reason)
    {
        if (!_outbound.TryClose())
        {
            return;
        }
        _closedReason = reason;
        StopTime = DateTime.UtcNow;
        var cutNow = reason is ClosedReason.SlowConsumerPendingBytes or ClosedReason.SlowConsumerWriteDeadline
            or ClosedReason.WriteError or ClosedReason.ReadError;
        if (cutNow)
        {
            _outbound.Discard();
            _transport.Abort();
        }
        else
        {
            // Flush what is queued (the -ERR), but like Go's flushAndClose never for longer than the write deadline.
            _ = Task.Delay(_settings.Options.WriteDeadline).ContinueWith(static (_, state) => ((ClientTransport)state!).Abort(), _transport, TaskScheduler.Default);
        }
        // Publishers waiting for this client to drain go back to full speed.
        _outbound.ReleaseStallIfDrained();
        _subscriptions.RemoveAll(Account);
        _server.OnClientClosed(this);
        _outbound.SignalFlush();
    }
}
