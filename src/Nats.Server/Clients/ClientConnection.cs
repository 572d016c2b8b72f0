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
/// One client connection, a thin coordinator of single-concept parts (docs/ARCHITECTURE.md lists
/// them): it builds and wires them, runs the two loops, closes, runs the heartbeat checks and is the
/// monitoring surface. A <see cref="ReadLoop"/> receives and a <see cref="CommandDispatcher"/> hands
/// each command to <see cref="ConnectHandler"/>, <see cref="SubscribeHandler"/> or
/// <see cref="PublishHandler"/> (routed by a <see cref="Nats.Server.Delivery.MessageRouter"/>);
/// <see cref="ClientDelivery"/> takes what publishers send this client into its
/// <see cref="OutboundQueue"/>, which writes it; <see cref="ProtocolWriter"/> queues protocol lines;
/// <see cref="ClientReload"/> applies a reload; <see cref="ConnectionSettings"/> holds what the
/// connection speaks. It is admitted by <see cref="Hosting.ClientAdmission"/>; the server's own
/// clients come from <see cref="InternalClient"/>.
/// </summary>
internal sealed class ClientConnection : Nats.Server.Delivery.Receiver, IOutboundOwner
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
    // This client as a publisher: its router, flush batch and stall list.
    private readonly Nats.Server.Delivery.MessageOrigin _origin;
    private readonly PublishHandler _publish;
    private readonly ConnectHandler _connectHandler;
    private readonly ReadLoop _readLoop;
    private readonly OutboundQueue _outbound;
    private readonly ProtocolWriter _protocol;
    private readonly ClientSubscriptions _subscriptions = new();
    private ClosedReason _closedReason;

    public ClientConnection(NatsServer server, ClientTransport transport, ulong id, Account account, ILogger logger)
        : base(Nats.Server.Delivery.ReceiverKind.Client)
    {
        _server = server;
        _transport = transport;
        _outbound = new OutboundQueue(this, transport);
        _origin = new Nats.Server.Delivery.MessageOrigin(server, this);
        _protocol = new ProtocolWriter(this, _outbound, _origin.FlushBatch);
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
        _publish = new PublishHandler(this, _connect, _auth, _origin.Router, _protocol);
        _connectHandler = new ConnectHandler(this, server, transport, _settings, _connect, _auth, _membership, _publish, _ping, _protocol, logger);
        Reload = new ClientReload(this, server, _settings, _auth, _connect, _connectHandler, _protocol, logger);
        var subscribe = new SubscribeHandler(this, _settings, _connect, _auth, _subscriptions, _outbound, _protocol, logger);
        var commands = new CommandDispatcher(this, server, _settings, _publish, subscribe, _connectHandler, _ping, _outbound, _origin.StalledOn, _protocol, logger);
        _readLoop = new ReadLoop(this, transport, commands, _settings, _ping, _outbound, _origin.FlushBatch, _origin.StalledOn, logger);
    }

    public ulong Id { get; }

    /// <summary>What a configuration reload or lame duck mode does to this client.</summary>
    internal readonly ClientReload Reload;

    /// <summary>Delivery into this client on behalf of a publisher (the router's per-subscriber step).</summary>
    internal readonly ClientDelivery Delivery;

    // The parts an internal publisher and the internal-client factory work with (InternalClient).
    internal ConnectionSettings Settings => _settings;
    internal OutboundQueue Outbound => _outbound;

    /// <summary>This client as the origin of what it publishes (receivers see it as <see cref="Nats.Server.Delivery.Message.Origin"/>).</summary>
    internal Nats.Server.Delivery.MessageOrigin Origin => _origin;

    internal Nats.Server.Gateways.GatewayService? Gateways => _server.Gateways;
    internal FlushBatch FlushBatch => _origin.FlushBatch;
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
    internal byte[] RequestInfoJson(string account, bool share, bool serverInfo) =>
        new RequestInfo(account, share, StartTime, RemoteIp, Id, _connect.User ?? AuthUser?.Name, _connect.Name, _connect.Lang,
            _connect.Version, Rtt, _server.ServerName, _server.EventClusterName, serverInfo).ToJson();

    /// <summary>The TLS session for /connz (null on plain connections and before the handshake).</summary>
    internal Transport.TlsConnectionState? TlsState => _transport.Tls;

    /// <summary>A client of the NATS client port (Go's clientType NATS), not a websocket one.</summary>
    internal bool OnClientPort => _transport is Transport.TlsTransport or Transport.SocketTransport;

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
                _settings.AuthDeadlineTicks = Environment.TickCount64 + (long)_settings.Options.AuthTimeout.TotalMilliseconds;
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
        var authDeadline = Volatile.Read(ref _settings.AuthDeadlineTicks);
        if (authDeadline != 0 && _settings.AwaitingAuth && now >= authDeadline)
        {
            _logger.LogError("{Client} - Authentication Timeout", this);
            _protocol.SendNow(ErrorTexts.AuthenticationTimeout);
            CloseConnection(ClosedReason.AuthenticationTimeout);
            return;
        }
        var authExpires = Volatile.Read(ref _settings.AuthExpiresTicks);
        if (authExpires != 0 && now >= authExpires)
        {
            _logger.LogDebug("{Client} - User Authentication Expired", this);
            _protocol.SendNow("-ERR 'User Authentication Expired'\r\n"u8);
            CloseConnection(ClosedReason.AuthenticationExpired);
            return;
        }

        var writeStarted = _outbound.WriteStartedTicks;
        if (writeStarted != 0 && now - writeStarted > (long)_settings.Options.WriteDeadline.TotalMilliseconds)
        {
            _server.RecordSlowConsumer();
            _logger.LogInformation("{Client} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded with {Chunks} chunks of {Pending} total bytes.",
                this, GoDuration.Format(_settings.Options.WriteDeadline), _outbound.PendingChunks, _outbound.PendingAndInFlight);
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

    /// <summary>Takes a subscription out of this client and the index (UNSUB, auto-unsubscribe).</summary>
    internal void RemoveSubscription(Subscription subscription) => _subscriptions.Remove(subscription, Account);

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

    void IOutboundOwner.OnWriteError() => CloseConnection(ClosedReason.WriteError);

    /// <summary>The write side made progress: counts as activity for the ping timer.</summary>
    public void NoteWriteActivity() => _ping.NoteActivity(Environment.TickCount64);

    public void OnWriteLoopFailed(Exception ex)
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
