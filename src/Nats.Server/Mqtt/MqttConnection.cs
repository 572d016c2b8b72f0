using System.Net;
using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Transport;

namespace Nats.Server.Mqtt;

/// <summary>
/// One MQTT connection, a coordinator of small parts as <see cref="ClientConnection"/> is. It is admitted
/// by the same door as a NATS client (<see cref="ClientAdmission.AdmitMqtt"/>) over the same
/// <see cref="ClientTransport"/>s (plain TCP, TLS first, WebSocket) and writes through the same
/// <see cref="OutboundQueue"/> (<see cref="MqttOutbound"/>); its time-driven checks (authentication
/// timeout, keep-alive, write deadline) run on the server's heartbeat like a client's. The parts:
/// <see cref="MqttReadLoop"/> (receive, packet split, stalls), <see cref="MqttPacketDispatcher"/>,
/// <see cref="MqttConnectHandler"/>, <see cref="MqttPublishHandler"/>, <see cref="MqttSubscribeHandler"/>
/// and <see cref="MqttDeparture"/> (what closing does to the session).
/// </summary>
internal sealed class MqttConnection : IOutboundOwner
{
    private readonly MqttServer _owner;
    private readonly NatsServer _server;
    private readonly ClientTransport _transport;
    private readonly ILogger _logger;
    private readonly MqttReadLoop _readLoop;
    private readonly MqttDeparture _departure;
    private readonly string _remoteAddress;
    private readonly long _authDeadlineTicks;
    private int _closed;
    private int _disconnectSent;
    private long _lastReadTicks = Environment.TickCount64;
    private long _keepAliveDeadlineMs;

    public MqttConnection(MqttServer owner, NatsServer server, ClientTransport transport, ulong id, ILogger logger)
    {
        _owner = owner;
        _server = server;
        _transport = transport;
        _logger = logger;
        Id = id;
        Start = DateTime.UtcNow;
        if (transport.RemoteEndPoint is IPEndPoint remote)
        {
            RemoteIp = remote.Address.IsIPv4MappedToIPv6 ? remote.Address.MapToIPv4().ToString() : remote.Address.ToString();
            RemotePort = remote.Port;
        }
        _remoteAddress = $"{RemoteIp}:{RemotePort} - mid:{Id}";
        Outbound = new MqttOutbound(this, transport, () => server.Options.MaxPending, () => server.Options.WriteDeadline, () => server.Options.NoFastProducerStall);
        Outbound.SlowConsumer += OnSlowConsumer;
        Outbound.FastProducerDrop += server.RecordFastProducerDrop;
        var publish = new MqttPublishHandler(this, owner, logger);
        var subscribe = new MqttSubscribeHandler(this, owner, logger);
        var connect = new MqttConnectHandler(this, owner, server, logger);
        _departure = new MqttDeparture(this, owner, publish);
        _readLoop = new MqttReadLoop(this, transport, new MqttPacketDispatcher(this, connect, publish, subscribe), server);
        if (owner.AuthRequired)
        {
            var timeout = owner.Options.AuthTimeout > TimeSpan.Zero ? owner.Options.AuthTimeout : server.Options.AuthTimeout;
            _authDeadlineTicks = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        }
    }

    public ulong Id { get; }

    /// <summary>Came through the websocket listener: allowed_connection_types calls it MQTT_WS (Go's connectionTypeAllowed).</summary>
    public bool IsWebSocket => _transport.IsWebSocket;

    public DateTime Start { get; }
    public string RemoteIp { get; } = "";
    public int RemotePort { get; }
    public MqttOutbound Outbound { get; }
    public string ClientId => Connect?.ClientId ?? "";
    public string? User => AuthUser?.Name;
    public string AccountName => Session?.Account.Name ?? Accounts.Account.GlobalAccountName;
    public DateTime LastActivity => DateTime.UtcNow - TimeSpan.FromMilliseconds(Math.Max(0, Environment.TickCount64 - Volatile.Read(ref _lastReadTicks)));
    public ClosedReason ClosedReason { get; private set; }
    public bool IsClosed => Volatile.Read(ref _closed) != 0;
    public long InMsgs;
    public long InBytes;
    public long OutMsgs => Volatile.Read(ref Outbound.Queue.OutMsgs);
    public long OutBytes => Volatile.Read(ref Outbound.Queue.OutBytes);
    public long PendingBytes => Outbound.Queue.PendingBytes;

    /// <summary>The TLS session for /connz (null on plain connections and before the handshake).</summary>
    internal TlsConnectionState? TlsState => _transport.Tls;

    /// <summary>The CONNECT that bound this connection; null before.</summary>
    public MqttConnect? Connect { get; private set; }

    public AuthenticatedUser? AuthUser { get; private set; }

    /// <summary>The user's permissions with the per-connection caches a NATS client has (the same checks, the same code).</summary>
    public ClientPermissions? Permissions { get; private set; }

    /// <summary>Bound by CONNECT; null before.</summary>
    public MqttSession? Session { get; private set; }

    /// <summary>Releases PUBACK/PUBREC once JetStream has the message; bound by CONNECT.</summary>
    public MqttStoreAcks? StoreAcks { get; private set; }

    /// <summary>MQTT 5 connections only: what CONNECT negotiated.</summary>
    public MqttV5Link? V5 { get; private set; }

    /// <summary>The protocol level CONNECT asked for (4: 3.1.1, 5), known before the rest of it is parsed.</summary>
    public byte Level { get; set; }

    public int SubscriptionCount => Session?.Filters.Count ?? 0;

    /// <summary>The client's DISCONNECT discarded the will (or a takeover did).</summary>
    public bool WillDiscarded { get; set; }

    public override string ToString() => Connect is null ? _remoteAddress : $"{_remoteAddress} - \"{Connect.ClientId}\"";

    /// <summary>CONNECT was accepted: the connection is bound to its user and session.</summary>
    internal void Bind(MqttConnect connect, AuthenticatedUser user, MqttSession session, MqttStoreAcks storeAcks, MqttV5Link? v5, TimeSpan keepAliveDeadline)
    {
        _keepAliveDeadlineMs = (long)keepAliveDeadline.TotalMilliseconds;
        AuthUser = user;
        Permissions = user.Permissions is { } compiled ? new ClientPermissions(compiled) : null;
        Session = session;
        StoreAcks = storeAcks;
        V5 = v5;
        Connect = connect;
    }

    internal void NoteRead() => Volatile.Write(ref _lastReadTicks, Environment.TickCount64);

    /// <summary>Runs both loops until the connection ends; <paramref name="refused"/> (max_connections, shutdown) closes it unread.</summary>
    public async Task RunAsync(ClosedReason? refused)
    {
        var writer = Task.Run(Outbound.Queue.RunWriteLoopAsync);
        if (refused is { } reason)
        {
            if (reason == ClosedReason.MaxConnectionsExceeded)
            {
                _logger.LogError("{Connection} - maximum connections exceeded", this);
            }
            Close(reason);
        }
        else
        {
            Close(await ReadAsync().ConfigureAwait(false));
        }
        await writer.ConfigureAwait(false);
        _owner.OnClosed(this);
    }

    private async Task<ClosedReason> ReadAsync()
    {
        try
        {
            return await _readLoop.RunAsync().ConfigureAwait(false);
        }
        catch (MqttProtocolException e)
        {
            _logger.LogError("{Connection} - {Error}", this, e.Message);
            if (e is MqttFlappingException flapping)
            {
                await Task.Delay(flapping.Jail).ConfigureAwait(false);
            }
            if (Level == 5)
            {
                SendV5Refusal(e);
            }
            else if (e.ConnAckCode != 0)
            {
                Outbound.Enqueue([MqttPackets.ConnAck, 2, 0, e.ConnAckCode]);
            }
            return e is MqttConnectHandler.ConnectionRefused ? ClosedReason.AuthenticationViolation : ClosedReason.ProtocolViolation;
        }
        catch (TlsHandshakeFailedException)
        {
            return ClosedReason.TlsHandshakeError;
        }
        catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or System.Net.WebSockets.WebSocketException
            or OperationCanceledException or ObjectDisposedException)
        {
            return IsClosed ? ClosedReason : ClosedReason.ReadError;
        }
    }

    /// <summary>
    /// The server heartbeat's checks (as a client's <c>OnHeartbeat</c>): the authentication timeout, the
    /// keep-alive (1.5 times the client's interval without a packet, Go's read deadline) and the write deadline.
    /// </summary>
    internal void OnHeartbeat(long now)
    {
        if (IsClosed)
        {
            return;
        }
        if (_authDeadlineTicks != 0 && Connect is null && now >= _authDeadlineTicks)
        {
            _logger.LogError("{Connection} - Authentication Timeout", this);
            Close(ClosedReason.AuthenticationTimeout);
            return;
        }
        var keepAlive = Volatile.Read(ref _keepAliveDeadlineMs);
        if (keepAlive > 0 && Connect is not null && now - Volatile.Read(ref _lastReadTicks) > keepAlive)
        {
            _logger.LogDebug("{Connection} - Client connection timed out (keep-alive)", this);
            SendDisconnect(MqttReasonCodes.KeepAliveTimeout, "keep alive timeout");
            Close(ClosedReason.StaleConnection);
            return;
        }
        var writeStarted = Outbound.Queue.WriteStartedTicks;
        var deadline = _server.Options.WriteDeadline;
        if (writeStarted != 0 && now - writeStarted > (long)deadline.TotalMilliseconds)
        {
            _server.RecordSlowConsumer();
            _logger.LogInformation("{Connection} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded with {Chunks} chunks of {Pending} total bytes.",
                this, GoDuration.Format(deadline), Outbound.Queue.PendingChunks, Outbound.Queue.PendingAndInFlight);
            Close(ClosedReason.SlowConsumerWriteDeadline);
        }
    }

    /// <summary>
    /// Closes once: the session side first (<see cref="MqttDeparture"/>: the will, detach, expiry), then the
    /// queue. Protocol closes flush what is queued (a CONNACK refusal, a DISCONNECT) within the write
    /// deadline; slow consumers and broken sockets are cut at once, as a client's are.
    /// </summary>
    public void Close(ClosedReason reason)
    {
        if (Interlocked.Exchange(ref _closed, 1) == 1)
        {
            return;
        }
        ClosedReason = reason;
        if (reason == ClosedReason.ServerShutdown)
        {
            SendDisconnect(MqttReasonCodes.ServerShuttingDown, "server shutting down");
        }
        _departure.Leave();
        StoreAcks?.Close();
        var queue = Outbound.Queue;
        if (!queue.TryClose())
        {
            return;
        }
        if (reason is ClosedReason.SlowConsumerPendingBytes or ClosedReason.SlowConsumerWriteDeadline or ClosedReason.WriteError or ClosedReason.ReadError)
        {
            queue.Discard();
            _transport.Abort();
        }
        else
        {
            _ = Task.Delay(_server.Options.WriteDeadline).ContinueWith(static (_, state) => ((ClientTransport)state!).Abort(), _transport, TaskScheduler.Default);
        }
        // Publishers waiting for this connection to drain go back to full speed.
        queue.ReleaseStallIfDrained();
        queue.SignalFlush();
    }

    /// <summary>A takeover: the old connection goes without its will, as Go removes it before closing.</summary>
    public void CloseReplaced()
    {
        WillDiscarded = true;
        SendDisconnect(MqttReasonCodes.SessionTakenOver, "session taken over");
        Close(ClosedReason.DuplicateClientId);
    }

    /// <summary>MQTT 5: the server-initiated DISCONNECT, once, with the reason text unless the client asked for none.</summary>
    public void SendDisconnect(byte reason, string text)
    {
        if (V5 is { } v5 && Interlocked.Exchange(ref _disconnectSent, 1) == 0)
        {
            Outbound.Enqueue(MqttV5Packets.Disconnect(reason, v5.Connect.RequestProblemInfo ? text : null));
        }
    }

    /// <summary>A QoS 1/2 message JetStream refused: Go's mqttProcessPub fails, so no PUBACK/PUBREC and the connection closes.</summary>
    internal void OnStoreFailed(byte packet, ushort packetId, string error)
    {
        _logger.LogError("{Connection} - unable to store QoS {Qos} message with packet id {Id}: {Error}", this,
            packet == MqttPackets.PubRec ? 2 : 1, packetId, error);
        // Never close on the storing thread (it may be this connection's read loop inside a publish).
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Close(ClosedReason.ProtocolViolation), this, preferLocal: false);
    }

    /// <summary>MQTT 5: a refused CONNECT gets a CONNACK with the reason code, a violation after it a DISCONNECT.</summary>
    private void SendV5Refusal(MqttProtocolException e)
    {
        if (V5 is null)
        {
            var reason = e.ConnAckCode != 0 ? MqttReasonCodes.FromConnAck311(e.ConnAckCode) : e.Reason;
            Outbound.Enqueue(MqttV5Packets.ConnAck(false, reason, null, null, 0, 0));
            return;
        }
        SendDisconnect(e.Reason, e.Message);
    }

    private void OnSlowConsumer(bool stuck)
    {
        _server.RecordSlowConsumer();
        if (stuck)
        {
            _logger.LogInformation("{Connection} - Slow Consumer Detected: WriteDeadline of {Bound} exceeded with {Chunks} chunks of {Pending} total bytes.",
                this, GoDuration.Format(Outbound.StuckBound), Outbound.Queue.PendingChunks, Outbound.Queue.PendingAndInFlight);
        }
        else
        {
            _logger.LogInformation("{Connection} - Slow Consumer Detected: MaxPending of {MaxPending} Exceeded", this, _server.Options.MaxPending);
        }
        Close(ClosedReason.SlowConsumerPendingBytes);
    }

    void IOutboundOwner.OnWriteError() => Close(ClosedReason.WriteError);

    void IOutboundOwner.NoteWriteActivity()
    {
    }

    void IOutboundOwner.OnWriteLoopFailed(Exception exception)
    {
        _logger.LogError(exception, "{Connection} - Unexpected error in write loop", this);
        Close(ClosedReason.WriteError);
    }
}
