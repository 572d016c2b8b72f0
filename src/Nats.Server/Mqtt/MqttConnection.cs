using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Mqtt;

/// <summary>
/// One MQTT connection: reads packets (Go's mqttParse: the first must be CONNECT, any violation closes
/// the connection), publishes into the account through its session's internal client, and writes
/// what its session's subscriptions encode.
/// </summary>
internal sealed class MqttConnection
{
    private readonly MqttServer _owner;
    private readonly NatsServer _server;
    private readonly Socket? _socket;
    private Stream _stream;
    private readonly ILogger _logger;
    private readonly MqttPublishHandler _publish;
    private readonly MqttSubscribeHandler _subscribe;
    private readonly CancellationTokenSource _shutdown = new();
    private readonly CancellationTokenSource _readTimeout = new();
    private MqttConnect? _connect;
    private MqttSession? _session;
    private AuthenticatedUser? _user;
    private TimeSpan _readDeadline;
    private int _closed;
    private volatile bool _willDiscarded;
    private MqttStoreAcks? _storeAcks;
    private volatile PipeReader? _reader;
    private ClosedReason? _refused;
    private MqttV5Link? _v5;
    private byte _level;
    private int _disconnectSent;

    /// <summary>A client of the MQTT port: <paramref name="socket"/> carries the packets (inside TLS when the block has tls {}).</summary>
    public MqttConnection(MqttServer owner, NatsServer server, Socket socket, ulong id, ILogger logger)
        : this(owner, server, new NetworkStream(socket, ownsSocket: true), socket.RemoteEndPoint as IPEndPoint, webSocket: false, id, logger)
    {
        _socket = socket;
        _socket.NoDelay = true;
    }

    /// <summary>
    /// A client of the websocket port at /mqtt: <paramref name="stream"/> reads the payloads of its
    /// binary messages back to back and writes each flush as one message, so packets cross message
    /// boundaries freely; the listener already did TLS, and closes the WebSocket when this connection ends.
    /// </summary>
    public MqttConnection(MqttServer owner, NatsServer server, Stream stream, IPEndPoint? remote, bool webSocket, ulong id, ILogger logger)
    {
        _owner = owner;
        _server = server;
        _publish = new MqttPublishHandler(this, owner, logger);
        _subscribe = new MqttSubscribeHandler(this, owner, logger);
        _stream = stream;
        IsWebSocket = webSocket;
        _logger = logger;
        Id = id;
        Start = DateTime.UtcNow;
        if (remote is not null)
        {
            RemoteIp = remote.Address.IsIPv4MappedToIPv6 ? remote.Address.MapToIPv4().ToString() : remote.Address.ToString();
            RemotePort = remote.Port;
        }
        // A publisher waiting on this connection's full queue cuts it after this long without a write: the
        // bound a NATS client gets (ClientDelivery.StuckBound), write_deadline capped at one second.
        var stuck = server.Options.WriteDeadline < TimeSpan.FromSeconds(1) ? server.Options.WriteDeadline : TimeSpan.FromSeconds(1);
        Outbound = new MqttOutbound(server.Options.MaxPending, stuck, () => server.Options.NoFastProducerStall);
        Outbound.SlowConsumer += () =>
        {
            server.RecordSlowConsumer();
            Close(ClosedReason.SlowConsumerPendingBytes);
        };
        Outbound.FastProducerDrop += server.RecordFastProducerDrop;
    }

    public ulong Id { get; }

    /// <summary>Came through the websocket listener: allowed_connection_types calls it MQTT_WS (Go's connectionTypeAllowed).</summary>
    public bool IsWebSocket { get; }

    public DateTime Start { get; }
    public string RemoteIp { get; } = "";
    public int RemotePort { get; }
    public MqttOutbound Outbound { get; }
    public string ClientId => _connect?.ClientId ?? "";
    public string? User => _user?.Name;
    public string AccountName => _session?.Account.Name ?? Accounts.Account.GlobalAccountName;
    public DateTime LastActivity { get; private set; } = DateTime.UtcNow;
    public ClosedReason ClosedReason { get; private set; }
    public long InMsgs;
    public long InBytes;
    public long OutMsgs;
    public long OutBytes;

    /// <summary>The user's permissions with the per-connection caches a NATS client has (the same checks, the same code).</summary>
    public ClientPermissions? Permissions { get; private set; }

    /// <summary>Bound by CONNECT; null before.</summary>
    public MqttSession? Session => _session;

    /// <summary>Releases PUBACK/PUBREC once JetStream has the message; bound by CONNECT.</summary>
    public MqttStoreAcks? StoreAcks => _storeAcks;

    public int SubscriptionCount => _session?.FilterCount ?? 0;

    /// <summary>MQTT 5 connections only: what CONNECT negotiated.</summary>
    public MqttV5Link? V5 => _v5;

    public void CountOut(int bytes)
    {
        Interlocked.Increment(ref OutMsgs);
        Interlocked.Add(ref OutBytes, bytes);
    }

    public override string ToString() => _connect is null ? $"{RemoteIp}:{RemotePort} - mid:{Id}" : $"{RemoteIp}:{RemotePort} - mid:{Id} - \"{_connect.ClientId}\"";

    /// <summary>Admission said no (max_connections, shutdown): <see cref="RunAsync"/> closes without reading.</summary>
    public void RefuseAdmission(ClosedReason reason) => _refused = reason;

    public async Task RunAsync()
    {
        if (_refused is { } refused)
        {
            if (refused == ClosedReason.MaxConnectionsExceeded)
            {
                _logger.LogError("{Connection} - maximum connections exceeded", this);
            }
            CloseUnstarted(refused);
            return;
        }
        // Over WebSocket the listener's own TLS (or none) applies, as Go's createMQTTClient skips the MQTT block's for ws clients.
        if (!IsWebSocket && _owner.Options.TlsContext is { } tls)
        {
            if (await MqttTlsHandshake.HandshakeAsync(_stream, tls, _logger, this).ConfigureAwait(false) is not { } secured)
            {
                CloseUnstarted(ClosedReason.TlsHandshakeError);
                return;
            }
            _stream = secured;
        }
        var writer = Outbound.RunAsync(_stream, _shutdown.Token);
        _ = writer.ContinueWith(t =>
        {
            if (t.IsFaulted)
            {
                Close(ClosedReason.WriteError);
            }
        }, TaskScheduler.Default);
        Timer? authTimer = null;
        if (_owner.AuthRequired)
        {
            var timeout = _owner.Options.AuthTimeout > TimeSpan.Zero ? _owner.Options.AuthTimeout : _server.Options.AuthTimeout;
            authTimer = new Timer(_ =>
            {
                if (_connect is null)
                {
                    _logger.LogError("{Connection} - Authentication Timeout", this);
                    Close(ClosedReason.AuthenticationTimeout);
                }
            }, null, timeout, Timeout.InfiniteTimeSpan);
        }
        var reason = ClosedReason.ClientClosed;
        try
        {
            reason = await ReadLoopAsync().ConfigureAwait(false);
        }
        catch (MqttProtocolException e)
        {
            _logger.LogError("{Connection} - {Error}", this, e.Message);
            if (e is MqttFlappingException flapping)
            {
                await Task.Delay(flapping.Jail).ConfigureAwait(false);
            }
            if (_level == 5)
            {
                SendV5Refusal(e);
            }
            else if (e.ConnAckCode != 0)
            {
                Outbound.Enqueue([MqttPackets.ConnAck, 2, 0, e.ConnAckCode]);
            }
            reason = e is ConnectionRefused ? ClosedReason.AuthenticationViolation : ClosedReason.ProtocolViolation;
        }
        catch (OperationCanceledException) when (_readTimeout.IsCancellationRequested && !_shutdown.IsCancellationRequested)
        {
            _logger.LogDebug("{Connection} - Client connection timed out (keep-alive)", this);
            SendDisconnect(MqttReasonCodes.KeepAliveTimeout, "keep alive timeout");
            reason = ClosedReason.StaleConnection;
        }
        catch (Exception e) when (e is IOException or SocketException or System.Net.WebSockets.WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
            reason = _shutdown.IsCancellationRequested ? ClosedReason : ClosedReason.ReadError;
        }
        finally
        {
            authTimer?.Dispose();
        }
        Close(reason);
        try
        {
            await writer.ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or System.Net.WebSockets.WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
        }
        if (_socket is not null)
        {
            _socket.Dispose();
        }
        else
        {
            await _stream.DisposeAsync().ConfigureAwait(false);
        }
        _owner.OnClosed(this);
    }

    private void CloseUnstarted(ClosedReason reason)
    {
        ClosedReason = reason;
        Interlocked.Exchange(ref _closed, 1);
        Outbound.Close();
        if (_socket is not null)
        {
            _socket.Dispose();
        }
        else
        {
            _stream.Dispose();
        }
        _owner.OnClosed(this);
    }

    /// <summary>Closes once: publishes the will unless DISCONNECT discarded it, ends the session's live part, flushes and shuts the socket.</summary>
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
        if (_session is { } session)
        {
            var will = _willDiscarded ? null : _connect?.Will;
            var expiry = _v5?.SessionExpiry ?? 0;
            if (will is not null && (will.Delay == 0 || session.Clean))
            {
                _publish.PublishWill(session, will);
                FlushPublished();
                will = null;
            }
            if (session.Detach(this))
            {
                if (session.Clean)
                {
                    session.Clear();
                    _owner.RemoveSession(session);
                }
                else if (_v5 is not null)
                {
                    _owner.ScheduleExpiry(session, expiry, will?.Delay ?? 0, will is null ? null : () =>
                    {
                        _publish.PublishWill(session, will);
                        FlushPublished();
                    });
                }
            }
        }
        _storeAcks?.Close();
        Outbound.Close();
        try
        {
            // A WebSocket has no half close: the pending read returns instead, and the writer still flushes.
            _socket?.Shutdown(SocketShutdown.Receive);
            _reader?.CancelPendingRead();
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or InvalidOperationException)
        {
        }
        _shutdown.CancelAfter(TimeSpan.FromSeconds(2));
    }

    /// <summary>A takeover: the old connection goes without its will, as Go removes it before closing.</summary>
    public void CloseReplaced()
    {
        _willDiscarded = true;
        SendDisconnect(MqttReasonCodes.SessionTakenOver, "session taken over");
        Close(ClosedReason.DuplicateClientId);
    }

    private async Task<ClosedReason> ReadLoopAsync()
    {
        var reader = PipeReader.Create(_stream, new StreamPipeReaderOptions(bufferSize: 65536, minimumReadSize: 4096, leaveOpen: true));
        _reader = reader;
        try
        {
            if (Volatile.Read(ref _closed) == 1)
            {
                return ClosedReason;
            }
            while (true)
            {
                ReadResult result;
                if (_readDeadline > TimeSpan.Zero)
                {
                    _readTimeout.CancelAfter(_readDeadline);
                    result = await reader.ReadAsync(_readTimeout.Token).ConfigureAwait(false);
                    _readTimeout.CancelAfter(Timeout.InfiniteTimeSpan);
                }
                else
                {
                    result = await reader.ReadAsync(_shutdown.Token).ConfigureAwait(false);
                }
                if (Volatile.Read(ref _closed) == 1)
                {
                    return ClosedReason;
                }
                var buffer = result.Buffer;
                LastActivity = DateTime.UtcNow;
                var stalled = false;
                while (TryReadPacket(ref buffer, out var header, out var body))
                {
                    if (!Process(header, body))
                    {
                        FlushPublished();
                        return ClosedReason.ClientClosed;
                    }
                    if (_session?.Publisher.StallPending == true)
                    {
                        stalled = true;
                        break;
                    }
                }
                FlushPublished();
                if (stalled)
                {
                    // A subscriber we fed is full: the rest of the buffer waits until it has drained, as a NATS publisher's does.
                    reader.AdvanceTo(buffer.Start);
                    while (_session?.Publisher is { StallPending: true } nats && Volatile.Read(ref _closed) == 0)
                    {
                        await nats.WaitForStallsAsync().ConfigureAwait(false);
                    }
                    continue;
                }
                reader.AdvanceTo(buffer.Start, buffer.End);
                if (result.IsCompleted)
                {
                    return ClosedReason.ClientClosed;
                }
            }
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Splits off one complete packet; Go's first-packet and remaining-length checks happen here.</summary>
    private bool TryReadPacket(ref ReadOnlySequence<byte> buffer, out byte header, out ReadOnlySequence<byte> body)
    {
        header = 0;
        body = default;
        if (buffer.IsEmpty)
        {
            return false;
        }
        Span<byte> head = stackalloc byte[MqttDecoder.MaxFixedHeader];
        var available = (int)Math.Min(buffer.Length, MqttDecoder.MaxFixedHeader);
        buffer.Slice(0, available).CopyTo(head);
        header = head[0];
        var type = (byte)(header & MqttPackets.TypeMask);
        if (_connect is null && type != MqttPackets.Connect)
        {
            throw new MqttProtocolException($"the first packet should be a CONNECT ({MqttPackets.Connect}), got {type}");
        }
        var position = MqttDecoder.ReadRemainingLength(head[..available], out var length);
        if (position == 0)
        {
            return false;
        }
        if (_v5 is { } v5 && (uint)(position + length) > v5.MaximumPacketSize)
        {
            throw new MqttProtocolException($"packet of {position + length} bytes over the maximum packet size {v5.MaximumPacketSize}",
                reason: MqttReasonCodes.PacketTooLarge);
        }
        if (type == MqttPackets.Publish && length > _server.Options.MaxPayload + 65536 + 4)
        {
            // Go 2.9.10 buffers any size; we refuse what cannot be a max_payload message plus a topic.
            throw new MqttProtocolException("maximum payload exceeded");
        }
        if (buffer.Length < position + length)
        {
            return false;
        }
        body = buffer.Slice(position, length);
        buffer = buffer.Slice(position + length);
        return true;
    }

    /// <summary>Publishes of one read buffer reach their receivers' sockets in one flush per receiver.</summary>
    private void FlushPublished()
    {
        if (_session is { } session)
        {
            lock (session.Nats)
            {
                session.Publisher.FlushBatch();
            }
        }
    }

    private bool Process(byte header, ReadOnlySequence<byte> body)
    {
        byte[]? rented = null;
        ReadOnlySpan<byte> span;
        if (body.IsSingleSegment)
        {
            span = body.FirstSpan;
        }
        else
        {
            rented = ArrayPool<byte>.Shared.Rent((int)body.Length);
            body.CopyTo(rented);
            span = rented.AsSpan(0, (int)body.Length);
        }
        try
        {
            return Dispatch(header, span);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private bool Dispatch(byte header, ReadOnlySpan<byte> body)
    {
        var type = (byte)(header & MqttPackets.TypeMask);
        switch (type)
        {
            case MqttPackets.Publish:
                _publish.HandlePublish((byte)(header & 0x0f), body);
                return true;
            case MqttPackets.PubAck:
                MqttV5Disconnect.CheckAck(body, _v5);
                if (_session!.PubAck(new MqttReader(body).ReadUInt16("packet identifier")) is { } acked)
                {
                    _session.Ack(acked);
                }
                return true;
            case MqttPackets.Subscribe:
                _subscribe.HandleSubscribe(header, body);
                return true;
            case MqttPackets.Unsubscribe:
                _subscribe.HandleUnsubscribe(header, body);
                return true;
            case MqttPackets.PingReq:
                Outbound.Enqueue([MqttPackets.PingResp, 0]);
                return true;
            case MqttPackets.Connect:
                if (_connect is not null)
                {
                    throw new MqttProtocolException("received a second CONNECT packet");
                }
                HandleConnect(body);
                return true;
            case MqttPackets.Disconnect:
                // [MQTT-3.1.2-8]: a normal disconnect discards the will; MQTT 5's 0x04 keeps it.
                _willDiscarded = _v5 is null || MqttV5Disconnect.Read(body, _v5);
                return false;
            case MqttV5Disconnect.Auth when _v5 is not null:
                throw new MqttProtocolException("AUTH without an authentication method in CONNECT", reason: MqttReasonCodes.ProtocolError);
            case MqttPackets.PubRec:
                MqttV5Disconnect.CheckAck(body, _v5);
                _publish.HandlePubRec(new MqttReader(body).ReadUInt16("packet identifier"));
                return true;
            case MqttPackets.PubRel:
                MqttV5Disconnect.CheckAck(body, _v5);
                _publish.HandlePubRel(body);
                return true;
            case MqttPackets.PubComp:
                MqttV5Disconnect.CheckAck(body, _v5);
                if (_session!.PubComp(new MqttReader(body).ReadUInt16("packet identifier")) is { } completed)
                {
                    _session.Ack(completed);
                }
                return true;
            default:
                throw new MqttProtocolException($"received unknown packet type {type >> 4}");
        }
    }

    private void HandleConnect(ReadOnlySpan<byte> body)
    {
        // The level decides how a refusal is answered, so it is known before the rest is parsed.
        _level = body.Length > 6 && body[..6].SequenceEqual("\0\u0004MQTT"u8) ? body[6] : (byte)4;
        var connect = MqttConnect.Parse(body, MqttServer.NewClientId);
        var user = _owner.Authenticate(connect, RemoteIp, IsWebSocket ? ConnectionTypes.MqttWebsocket : ConnectionTypes.Mqtt);
        if (user is null)
        {
            _logger.LogError("{Connection} - authentication error", this);
            throw new ConnectionRefused();
        }
        _user = user;
        Permissions = user.Permissions is { } compiled ? new ClientPermissions(compiled) : null;
        var (session, present) = _owner.BindSession(this, connect, user);
        _session = session;
        _connect = connect;
        _readDeadline = connect.ReadDeadline;
        _storeAcks = new MqttStoreAcks(session.Nats, session.Account, _owner.JetStream.Origin, Id, Outbound, OnStoreFailed);
        if (connect.IsV5)
        {
            _v5 = new MqttV5Link(connect, _owner.Options.EffectiveReceiveMaximum, (uint)(_server.Options.MaxPayload + 65536 + 4 + 5 + 65536));
            _storeAcks.Link = _v5;
            Outbound.Enqueue(MqttV5Packets.ConnAck(present, MqttReasonCodes.Success, connect, connect.AssignedClientId ? connect.ClientId : null,
                _v5.ReceiveMaximum, _v5.MaximumPacketSize));
        }
        else
        {
            Outbound.Enqueue([MqttPackets.ConnAck, 2, present ? (byte)1 : (byte)0, MqttPackets.RcAccepted]);
        }
        session.Attach(this);
        _logger.LogDebug("{Connection} - Client connected", this);
    }

    /// <summary>A QoS 1/2 message JetStream refused: Go's mqttProcessPub fails, so no PUBACK/PUBREC and the connection closes.</summary>
    private void OnStoreFailed(byte packet, ushort packetId, string error)
    {
        _logger.LogError("{Connection} - unable to store QoS {Qos} message with packet id {Id}: {Error}", this,
            packet == MqttPackets.PubRec ? 2 : 1, packetId, error);
        // Never close on the storing thread (it may be this connection's read loop inside a publish).
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Close(ClosedReason.ProtocolViolation), this, preferLocal: false);
    }

    /// <summary>MQTT 5: a refused CONNECT gets a CONNACK with the reason code, a violation after it a DISCONNECT.</summary>
    private void SendV5Refusal(MqttProtocolException e)
    {
        if (_v5 is null)
        {
            var reason = e.ConnAckCode != 0 ? MqttReasonCodes.FromConnAck311(e.ConnAckCode) : e.Reason;
            Outbound.Enqueue(MqttV5Packets.ConnAck(false, reason, null, null, 0, 0));
            return;
        }
        SendDisconnect(e.Reason, e.Message);
    }

    /// <summary>MQTT 5: the server-initiated DISCONNECT, once, with the reason text unless the client asked for none.</summary>
    private void SendDisconnect(byte reason, string text)
    {
        if (_v5 is { } v5 && Interlocked.Exchange(ref _disconnectSent, 1) == 0)
        {
            Outbound.Enqueue(MqttV5Packets.Disconnect(reason, v5.Connect.RequestProblemInfo ? text : null));
        }
    }

    /// <summary>An authentication failure: CONNACK 5 (MQTT 5: 0x87) is queued and the connection closes.</summary>
    private sealed class ConnectionRefused() : MqttProtocolException("authentication error", MqttPackets.RcNotAuthorized);
}
