using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

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
    private readonly CancellationTokenSource _shutdown = new();
    private readonly CancellationTokenSource _readTimeout = new();
    private MqttConnect? _connect;
    private MqttSession? _session;
    private AuthenticatedUser? _user;
    private TimeSpan _readDeadline;
    private byte[] _subjectScratch = new byte[256];
    private byte[] _storeScratch = new byte[256];
    private int _closed;
    private volatile bool _willDiscarded;
    private MqttStoreAcks? _storeAcks;
    private volatile PipeReader? _reader;

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
        Outbound = new MqttOutbound(server.Options.MaxPending, stuck);
        Outbound.SlowConsumer += () => Close(ClosedReason.SlowConsumerPendingBytes);
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

    public int SubscriptionCount => _session?.FilterCount ?? 0;

    public void CountOut(int bytes)
    {
        Interlocked.Increment(ref OutMsgs);
        Interlocked.Add(ref OutBytes, bytes);
    }

    public override string ToString() => _connect is null ? $"{RemoteIp}:{RemotePort} - mid:{Id}" : $"{RemoteIp}:{RemotePort} - mid:{Id} - \"{_connect.ClientId}\"";

    public async Task RunAsync()
    {
        // Over WebSocket the listener's own TLS (or none) applies, as Go's createMQTTClient skips the MQTT block's for ws clients.
        if (!IsWebSocket && _owner.Options.TlsContext is { } tls && !await HandshakeAsync(tls).ConfigureAwait(false))
        {
            ClosedReason = ClosedReason.TlsHandshakeError;
            Interlocked.Exchange(ref _closed, 1);
            Outbound.Close();
            _socket?.Dispose();
            _owner.OnClosed(this);
            return;
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
            if (e.ConnAckCode != 0)
            {
                Outbound.Enqueue([MqttPackets.ConnAck, 2, 0, e.ConnAckCode]);
            }
            reason = e is ConnectionRefused ? ClosedReason.AuthenticationViolation : ClosedReason.ProtocolViolation;
        }
        catch (OperationCanceledException) when (_readTimeout.IsCancellationRequested && !_shutdown.IsCancellationRequested)
        {
            _logger.LogDebug("{Connection} - Client connection timed out (keep-alive)", this);
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

    /// <summary>Go requires TLS first on an MQTT port with tls {}: the handshake within the block's timeout, then MQTT inside it.</summary>
    private async Task<bool> HandshakeAsync(Tls.TlsServerContext tls)
    {
        var ssl = new SslStream(_stream, leaveInnerStreamOpen: false);
        var verifier = new Tls.ClientCertificateVerifier(tls);
        using var timeout = new CancellationTokenSource(tls.Timeout);
        try
        {
            await ssl.AuthenticateAsServerAsync(tls.CreateServerOptions(verifier), timeout.Token).ConfigureAwait(false);
            _stream = ssl;
            return true;
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException or OperationCanceledException or SocketException)
        {
            if (timeout.IsCancellationRequested)
            {
                _logger.LogError("{Connection} - TLS handshake timeout", this);
            }
            else
            {
                _logger.LogError("{Connection} - TLS handshake error: {Error}", this, verifier.FailureReason ?? e.Message);
            }
            await ssl.DisposeAsync().ConfigureAwait(false);
            return false;
        }
    }

    /// <summary>Closes once: publishes the will unless DISCONNECT discarded it, ends the session's live part, flushes and shuts the socket.</summary>
    public void Close(ClosedReason reason)
    {
        if (Interlocked.Exchange(ref _closed, 1) == 1)
        {
            return;
        }
        ClosedReason = reason;
        if (_session is { } session)
        {
            if (!_willDiscarded && _connect?.Will is { } will)
            {
                PublishWill(session, will);
                FlushPublished();
            }
            if (session.Detach(this) && session.Clean)
            {
                session.Clear();
                _owner.RemoveSession(session);
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
                HandlePublish((byte)(header & 0x0f), body);
                return true;
            case MqttPackets.PubAck:
                if (_session!.PubAck(new MqttReader(body).ReadUInt16("packet identifier")) is { } acked)
                {
                    _session.Ack(acked);
                }
                return true;
            case MqttPackets.Subscribe:
                HandleSubscribe(header, body);
                return true;
            case MqttPackets.Unsubscribe:
                HandleUnsubscribe(header, body);
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
                // [MQTT-3.1.2-8]: a normal disconnect discards the will.
                _willDiscarded = true;
                return false;
            case MqttPackets.PubRec:
                HandlePubRec(new MqttReader(body).ReadUInt16("packet identifier"));
                return true;
            case MqttPackets.PubRel:
                HandlePubRel(body);
                return true;
            case MqttPackets.PubComp:
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
        var connect = MqttConnect.Parse(body, MqttServer.NewClientId);
        var user = _owner.Authenticate(connect, RemoteIp, IsWebSocket ? ConnectionTypes.MqttWebsocket : ConnectionTypes.Mqtt);
        if (user is null)
        {
            _logger.LogError("{Connection} - authentication error", this);
            Outbound.Enqueue([MqttPackets.ConnAck, 2, 0, MqttPackets.RcNotAuthorized]);
            throw new ConnectionRefused();
        }
        _user = user;
        var (session, present) = _owner.BindSession(this, connect, user);
        _session = session;
        _connect = connect;
        _readDeadline = connect.ReadDeadline;
        _storeAcks = new MqttStoreAcks(session.Nats, session.Account, _owner.JetStream.Origin, Id, Outbound, OnStoreFailed);
        Outbound.Enqueue([MqttPackets.ConnAck, 2, present ? (byte)1 : (byte)0, MqttPackets.RcAccepted]);
        session.Attach(this);
        _logger.LogDebug("{Connection} - Client connected", this);
    }

    private void HandlePublish(byte flags, ReadOnlySpan<byte> body)
    {
        var publish = MqttDecoder.ParsePublish(flags, body, ref _subjectScratch);
        var subject = publish.Subject;
        var topic = publish.Topic;
        var payload = publish.Payload;
        var (qos, retain, packetId) = (publish.Qos, publish.Retain, publish.PacketId);
        if (qos == 2)
        {
            // Go 2.10: held in $MQTT_qos2in until PUBREL, once per packet id, so a resent PUBLISH is delivered once.
            // PUBREC once $MQTT_qos2in's PubAck says the message is durable (MqttStoreAcks).
            StoreQos2(packetId, subject, payload, retain);
            return;
        }
        Publish(_session!, subject, topic, payload, qos, retain, packetId);
    }

    /// <summary>A QoS 1/2 message JetStream refused: Go's mqttProcessPub fails, so no PUBACK/PUBREC and the connection closes.</summary>
    private void OnStoreFailed(byte packet, ushort packetId, string error)
    {
        _logger.LogError("{Connection} - unable to store QoS {Qos} message with packet id {Id}: {Error}", this,
            packet == MqttPackets.PubRec ? 2 : 1, packetId, error);
        // Never close on the storing thread (it may be this connection's read loop inside a publish).
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.Close(ClosedReason.ProtocolViolation), this, preferLocal: false);
    }

    private string Qos2Subject(ushort packetId) =>
        MqttJetStream.Qos2InPrefix + _connect!.ClientId + "." + packetId.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Go's mqttStoreQoS2MsgOnce: the message with Nmqtt-Pub:2 and Nmqtt-Subject headers (and retain in ours), once per packet id.</summary>
    private void StoreQos2(ushort packetId, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload, bool retain)
    {
        var js = _owner.JetStream;
        var session = _session!;
        var storeSubject = Qos2Subject(packetId);
        var acks = _storeAcks!;
        if (js.LoadLast(session.Account, MqttJetStream.Qos2InStream, storeSubject) is not null)
        {
            // A resent PUBLISH of a packet id already held: answered again, in order, with nothing stored, but
            // not before the held copy is durable (the first PUBLISH may have come on a connection that closed
            // while its sync round was running).
            acks.AfterDurable(MqttPackets.PubRec, packetId, js.WhenDurable(session.Account, MqttJetStream.Qos2InStream));
            return;
        }
        var headers = $"NATS/1.0\r\nNmqtt-Pub:2\r\nNmqtt-Subject:{Encoding.UTF8.GetString(subject)}\r\n{(retain ? "Nmqtt-Retain:1\r\n" : "")}\r\n";
        var reply = acks.Expect(MqttPackets.PubRec, packetId);
        if (!js.Store(session.Account, storeSubject, Encoding.UTF8.GetBytes(headers), payload, reply))
        {
            acks.NotStored(reply);
        }
    }

    /// <summary>Go's mqttProcessPubRel: the held message is removed from $MQTT_qos2in and published; PUBCOMP either way.</summary>
    private void HandlePubRel(ReadOnlySpan<byte> body)
    {
        var packetId = new MqttReader(body).ReadUInt16("packet identifier");
        var session = _session!;
        var js = _owner.JetStream;
        if (js.LoadLast(session.Account, MqttJetStream.Qos2InStream, Qos2Subject(packetId)) is { } stored)
        {
            js.Delete(session.Account, MqttJetStream.Qos2InStream, stored.Sequence);
            var headers = stored.Header.Span;
            if (Nats.Server.JetStream.NatsHeaders.Get(headers, "Nmqtt-Subject") is { Length: > 0 } subject)
            {
                var subjectBytes = Encoding.UTF8.GetBytes(subject);
                var topic = new byte[subjectBytes.Length * 2 + 1];
                var topicLength = MqttTopics.ToTopic(subjectBytes, topic);
                var retain = Nats.Server.JetStream.NatsHeaders.Get(headers, "Nmqtt-Retain") == "1";
                Publish(session, subjectBytes, topic.AsSpan(0, topicLength), stored.Data.Span, 2, retain);
            }
        }
        Outbound.Enqueue([MqttPackets.PubComp, 2, (byte)(packetId >> 8), (byte)packetId]);
    }

    /// <summary>Go's mqttProcessPubRec: the PUBREL is stored in $MQTT_out (delivered, and redelivered, by the PUBREL consumer), then the PUBLISH is acked.</summary>
    private void HandlePubRec(ushort packetId)
    {
        var session = _session!;
        var acked = session.PubRec(packetId);
        var headers = Encoding.ASCII.GetBytes($"NATS/1.0\r\nNmqtt-PubRel:{packetId}\r\n\r\n");
        _owner.JetStream.Store(session.Account, session.PubRelSubject, headers, default);
        if (acked is not null)
        {
            session.Ack(acked);
        }
    }

    /// <summary>Publishes into the account (no allocation for QoS 0/1 without retain).</summary>
    /// <summary>Publishes into the account and, for QoS 1/2, stores a copy in $MQTT_msgs; with a <paramref name="pubAckId"/>
    /// the PUBACK follows the store's PubAck (MqttStoreAcks), so an acknowledged message is durable.</summary>
    private void Publish(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, bool retain,
        ushort pubAckId = 0)
    {
        Interlocked.Increment(ref InMsgs);
        Interlocked.Add(ref InBytes, payload.Length);
        if (_user?.Permissions is { } permissions && !PublishAllowed(permissions, subjectBytes))
        {
            _logger.LogError("{Connection} - Publish Violation - User {User}, Subject {Subject}", this, _user.Name, Encoding.UTF8.GetString(subjectBytes));
            if (pubAckId > 0)
            {
                // Go still acknowledges a publish its permissions dropped.
                _storeAcks!.Immediate(MqttPackets.PubAck, pubAckId);
            }
            return;
        }
        if (retain)
        {
            var gate = _owner.Retained(session.Account).Gate;
            lock (gate)
            {
                _owner.SetRetained(session.Account, Encoding.UTF8.GetString(subjectBytes), topic, payload, qos);
                PublishLive(session, subjectBytes, payload, qos, retain, pubAckId);
            }
            return;
        }
        PublishLive(session, subjectBytes, payload, qos, retain, pubAckId);
    }

    /// <summary>The NATS fan-out and, for QoS 1/2, the copy in $MQTT_msgs (matched now, flushed per read buffer).</summary>
    private void PublishLive(MqttSession session, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> payload, byte qos, bool retain, ushort pubAckId)
    {
        ReadOnlySpan<byte> headers = qos switch
        {
            0 => "NATS/1.0\r\nNmqtt-Pub:0\r\n\r\n"u8,
            1 => "NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n"u8,
            _ => "NATS/1.0\r\nNmqtt-Pub:2\r\n\r\n"u8,
        };
        lock (session.Nats)
        {
            using (MqttPublishContext.Enter(qos, retain))
            {
                // Flushed once per read buffer (FlushPublished), not once per message.
                session.Publisher.PublishDeferred(session.Account, subjectBytes, default, headers, payload);
            }
            if (qos > 0)
            {
                // Go's mqttInitiateMsgDelivery: QoS 1/2 also go to $MQTT_msgs for the subscriptions' consumers.
                var stored = MqttJetStream.MessagesPrefix.Length + subjectBytes.Length;
                if (_storeScratch.Length < stored)
                {
                    _storeScratch = new byte[stored * 2];
                }
                "$MQTT.msgs."u8.CopyTo(_storeScratch);
                subjectBytes.CopyTo(_storeScratch.AsSpan(MqttJetStream.MessagesPrefix.Length));
                var reply = pubAckId > 0 ? _storeAcks!.Expect(MqttPackets.PubAck, pubAckId) : default;
                if (!session.Publisher.PublishDeferred(session.Account, _storeScratch.AsSpan(0, stored), reply, headers, payload) && pubAckId > 0)
                {
                    _storeAcks!.NotStored(reply);
                }
            }
        }
    }

    private void PublishWill(MqttSession session, MqttWill will)
    {
        try
        {
            Publish(session, Encoding.UTF8.GetBytes(will.Subject), will.Topic, will.Message, will.Qos, will.Retain);
        }
        catch (Exception e)
        {
            _logger.LogError("{Connection} - unable to publish will: {Error}", this, e.Message);
        }
    }

    private void HandleSubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: true, out var packetId, _logger, this);
        var session = _session!;
        var retained = _owner.Retained(session.Account);
        // See MqttRetainedStore.Gate: no retained publish lands between adding a filter and sending its retained messages.
        lock (retained.Gate)
        {
            SubscribeLocked(session, filters, packetId, retained);
        }
    }

    private void SubscribeLocked(MqttSession session, List<(string? Subject, byte Qos)> filters, ushort packetId, MqttRetainedStore retained)
    {
        var granted = new byte[filters.Count];
        var added = new List<(string Subject, byte Qos)>();
        for (var i = 0; i < filters.Count; i++)
        {
            var (subject, qos) = filters[i];
            if (subject is null || subject.StartsWith("$MQTT.sub.", StringComparison.Ordinal) || !SubscribeAllowed(subject)
                || !session.Subscribe(subject, subject, qos))
            {
                granted[i] = MqttPackets.SubAckFailure;
                continue;
            }
            if (MqttTopics.NeedsLevelUp(subject))
            {
                var parent = subject[..^2];
                if (!session.Subscribe(parent, parent + " fwc", qos))
                {
                    session.Unsubscribe(subject);
                    granted[i] = MqttPackets.SubAckFailure;
                    continue;
                }
                added.Add((parent, qos));
            }
            granted[i] = qos;
            added.Add((subject, qos));
        }
        var packet = new byte[2 + 2 + granted.Length + 4];
        packet[0] = MqttPackets.SubAck;
        var p = 1 + MqttPackets.WriteVarInt(packet.AsSpan(1), 2 + granted.Length);
        packet[p++] = (byte)(packetId >> 8);
        packet[p++] = (byte)packetId;
        granted.CopyTo(packet.AsSpan(p));
        // Stored before SUBACK, so a client that got its SUBACK finds the subscription after a restart.
        if (!session.Clean)
        {
            _owner.SaveSession(session);
        }
        Outbound.Enqueue(packet.AsSpan(0, p + granted.Length));
        if (retained.Count > 0)
        {
            foreach (var (subject, qos) in added)
            {
                foreach (var message in retained.Matching(subject))
                {
                    session.DeliverRetained(message, qos);
                }
            }
        }
    }

    private void HandleUnsubscribe(byte header, ReadOnlySpan<byte> body)
    {
        var filters = MqttDecoder.ParseFilters(header, body, subscribe: false, out var packetId, _logger, this);
        foreach (var (subject, _) in filters)
        {
            if (subject is null)
            {
                continue;
            }
            _session!.Unsubscribe(subject);
            if (MqttTopics.NeedsLevelUp(subject))
            {
                _session.Unsubscribe(subject[..^2] + " fwc");
            }
        }
        Outbound.Enqueue([MqttPackets.UnsubAck, 2, (byte)(packetId >> 8), (byte)packetId]);
        if (!_session!.Clean)
        {
            _owner.SaveSession(_session);
        }
    }

    private static bool PublishAllowed(CompiledPermissions permissions, ReadOnlySpan<byte> subject) =>
        (permissions.PublishAllow is null || permissions.PublishAllow.MatchesPlain(subject))
        && (permissions.PublishDeny is null || !permissions.PublishDeny.MatchesPlain(subject));

    private bool SubscribeAllowed(string subject)
    {
        if (_user?.Permissions is not { } permissions)
        {
            return true;
        }
        return (permissions.SubscribeAllow is null || permissions.SubscribeAllow.MatchesPlain(subject))
            && (permissions.SubscribeDeny is null || !permissions.SubscribeDeny.MatchesPlain(subject));
    }

    /// <summary>An authentication failure: CONNACK 5 is queued and the connection closes.</summary>
    private sealed class ConnectionRefused() : MqttProtocolException("authentication error", 0);
}
