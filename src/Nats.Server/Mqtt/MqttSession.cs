using System.Buffers.Binary;
using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.Subscriptions;

namespace Nats.Server.Mqtt;

/// <summary>
/// The state of one MQTT client id: its subscriptions (NATS subscriptions whose receiver encodes
/// PUBLISH packets) and QoS 1 messages awaiting PUBACK. A clean_session=false session outlives its
/// connection: its QoS 1 subscriptions keep collecting messages while the client is away and resend
/// them (DUP set) when it reconnects, as Go's durable JetStream consumers do.
/// </summary>
internal sealed class MqttSession
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, SubscriptionState> _subscriptions = new(StringComparer.Ordinal);
    private readonly SortedDictionary<ushort, PendingMessage> _pending = new();
    private readonly Queue<PendingMessage> _backlog = new();
    private readonly int _maxAckPending;
    private readonly long _ackWaitTicks;
    private volatile MqttConnection? _connection;
    private ushort _lastPacketId;
    private long _nextSid;

    [ThreadStatic]
    private static byte[]? t_scratch;

    public MqttSession(string clientId, Account account, ClientConnection nats, MqttOptions options)
    {
        ClientId = clientId;
        Account = account;
        Nats = nats;
        _maxAckPending = options.EffectiveMaxAckPending;
        _ackWaitTicks = (long)options.EffectiveAckWait.TotalMilliseconds;
    }

    public string ClientId { get; }

    public Account Account { get; }

    /// <summary>The internal client that owns this session's NATS subscriptions and publishes for it.</summary>
    public ClientConnection Nats { get; }

    /// <summary>The last CONNECT's clean session flag; a clean session ends with its connection.</summary>
    public bool Clean { get; set; }

    /// <summary>Read without the lock on the QoS 0 path: a delivery racing a detach may still reach the closing socket.</summary>
    public MqttConnection? Connection => _connection;

    public int PendingCount
    {
        get
        {
            lock (_lock)
            {
                return _pending.Count + _backlog.Count;
            }
        }
    }

    /// <summary>The filters to restore, topic → QoS (what Go's session record holds).</summary>
    public IReadOnlyList<(string Filter, byte Qos)> Filters
    {
        get
        {
            lock (_lock)
            {
                return _subscriptions.Where(s => !s.Key.EndsWith(" fwc", StringComparison.Ordinal))
                    .Select(s => (s.Key, s.Value.Qos)).ToList();
            }
        }
    }

    /// <summary>Binds a connection and resends unacknowledged QoS 1 messages with DUP, then the backlog.</summary>
    public void Attach(MqttConnection connection)
    {
        lock (_lock)
        {
            _connection = connection;
            foreach (var pending in _pending.Values)
            {
                pending.SentAt = Environment.TickCount64;
                Resend(connection, pending);
            }
            DrainBacklogLocked();
        }
    }

    /// <summary>Unbinds <paramref name="connection"/> if it is still the session's (returns whether it was); QoS 0 subscriptions end with it.</summary>
    public bool Detach(MqttConnection connection)
    {
        lock (_lock)
        {
            if (_connection != connection)
            {
                return false;
            }
            _connection = null;
            foreach (var (sid, state) in _subscriptions.ToList())
            {
                if (Clean || state.Qos == 0)
                {
                    Account.SubList.Remove(state.Subscription);
                    state.Subscription.Closed = true;
                    if (Clean)
                    {
                        _subscriptions.Remove(sid);
                    }
                }
            }
            return true;
        }
    }

    /// <summary>The record persisted for a clean_session=false session.</summary>
    public MqttSessionRecord ToRecord()
    {
        lock (_lock)
        {
            var record = new MqttSessionRecord { Id = ClientId };
            foreach (var (sid, state) in _subscriptions)
            {
                record.Subscriptions[sid] = new MqttSubscriptionRecord { Subject = state.Subscription.SubjectString, Qos = state.Qos };
            }
            return record;
        }
    }

    /// <summary>
    /// A session read back at start-up: QoS 1 subscriptions listen at once (messages wait for the
    /// client, as Go's durable consumers keep them); QoS 0 ones come back when the client does.
    /// </summary>
    public void Restore(MqttSessionRecord record)
    {
        foreach (var (sid, subscription) in record.Subscriptions)
        {
            if (!Subscribe(subscription.Subject, sid, subscription.Qos) || subscription.Qos > 0)
            {
                continue;
            }
            lock (_lock)
            {
                var state = _subscriptions[sid];
                Account.SubList.Remove(state.Subscription);
                state.Subscription.Closed = true;
            }
        }
    }

    /// <summary>A resumed session: subscriptions that ended with the last connection (QoS 0) come back.</summary>
    public void RestoreSubscriptions()
    {
        lock (_lock)
        {
            foreach (var state in _subscriptions.Values)
            {
                if (state.Subscription.Closed)
                {
                    state.Subscription = NewSubscription(state.Subscription.SubjectString, state);
                    Account.SubList.Insert(state.Subscription);
                }
            }
        }
    }

    /// <summary>Removes every subscription and pending message (clean session, or a clean reconnect).</summary>
    public void Clear()
    {
        lock (_lock)
        {
            foreach (var state in _subscriptions.Values)
            {
                Account.SubList.Remove(state.Subscription);
                state.Subscription.Closed = true;
            }
            _subscriptions.Clear();
            _pending.Clear();
            _backlog.Clear();
        }
    }

    /// <summary>Adds or updates (QoS) a subscription under <paramref name="sid"/>; false when the subject is refused.</summary>
    public bool Subscribe(string subject, string sid, byte qos)
    {
        lock (_lock)
        {
            if (_subscriptions.TryGetValue(sid, out var existing))
            {
                existing.Qos = qos;
                if (existing.Subscription.Closed)
                {
                    // A QoS 0 subscription of a persistent session ended with the last connection.
                    existing.Subscription = NewSubscription(subject, existing);
                    return Account.SubList.Insert(existing.Subscription);
                }
                return true;
            }
            var state = new SubscriptionState(this) { Qos = qos };
            state.Subscription = NewSubscription(subject, state);
            if (!Account.SubList.Insert(state.Subscription))
            {
                return false;
            }
            _subscriptions[sid] = state;
            return true;
        }
    }

    public void Unsubscribe(string sid)
    {
        lock (_lock)
        {
            if (_subscriptions.Remove(sid, out var state))
            {
                Account.SubList.Remove(state.Subscription);
                state.Subscription.Closed = true;
            }
        }
    }

    /// <summary>Delivers a retained message to a new subscription (retain flag set).</summary>
    public void DeliverRetained(MqttRetainedMessage message, byte subscriptionQos)
    {
        var qos = Math.Min(subscriptionQos, message.Qos);
        Send(message.Topic, message.Payload, (byte)qos, retain: true);
    }

    /// <summary>A PUBACK (QoS 1) or PUBCOMP (QoS 2): the message is done; the next held-back one goes out.</summary>
    public void Acknowledge(ushort packetId)
    {
        lock (_lock)
        {
            if (_pending.Remove(packetId))
            {
                DrainBacklogLocked();
            }
        }
    }

    /// <summary>Resends, with DUP, QoS 1 messages not acknowledged within ack_wait.</summary>
    public void RedeliverExpired(long now)
    {
        lock (_lock)
        {
            if (_connection is not { } connection)
            {
                return;
            }
            foreach (var pending in _pending.Values)
            {
                if (now - pending.SentAt >= _ackWaitTicks)
                {
                    pending.SentAt = now;
                    Resend(connection, pending);
                }
            }
        }
    }

    private Subscription NewSubscription(string subject, SubscriptionState state)
    {
        var sid = Encoding.ASCII.GetBytes((++_nextSid).ToString(System.Globalization.CultureInfo.InvariantCulture));
        // Owned by the session's internal client (sid, /connz, removal); matches go to the state's receiver.
        return new Subscription(Nats, Encoding.UTF8.GetBytes(subject), null, sid, state);
    }

    /// <summary>The receiver: runs on the publisher's thread, encodes the PUBLISH and queues it.</summary>
    private bool Deliver(SubscriptionState state, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> body)
    {
        byte messageQos;
        bool retain;
        if (!MqttPublishContext.TryGet(out messageQos, out retain))
        {
            messageQos = QosFromHeaders(headers);
            retain = false;
        }
        var qos = Math.Min(state.Qos, messageQos);
        if (qos == 0 && _connection is null)
        {
            return true;
        }
        var scratch = t_scratch ??= new byte[1024];
        if (scratch.Length < subject.Length)
        {
            scratch = t_scratch = new byte[subject.Length * 2];
        }
        var topicLength = MqttTopics.ToTopic(subject, scratch);
        Send(scratch.AsSpan(0, topicLength), body, (byte)qos, retain);
        return true;
    }

    private void Send(ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, bool retain)
    {
        if (qos == 0)
        {
            if (Connection is not { } connection)
            {
                return;
            }
            var size = MqttPackets.PublishSize(topic.Length, payload.Length, 0);
            if (size <= 512)
            {
                Span<byte> small = stackalloc byte[size];
                MqttPackets.WritePublish(small, topic, payload, 0, 0, false, retain);
                connection.Outbound.Enqueue(small);
                connection.CountOut(payload.Length);
                return;
            }
            var packet = new byte[size];
            MqttPackets.WritePublish(packet, topic, payload, 0, 0, false, retain);
            connection.Outbound.Enqueue(packet);
            connection.CountOut(payload.Length);
            return;
        }
        var qos1 = new byte[MqttPackets.PublishSize(topic.Length, payload.Length, qos)];
        MqttPackets.WritePublish(qos1, topic, payload, qos, 0, false, retain);
        var remaining = 2 + topic.Length + payload.Length + 2;
        var pending = new PendingMessage(qos1, 1 + MqttPackets.VarIntSize(remaining) + 2 + topic.Length, payload.Length);
        lock (_lock)
        {
            _backlog.Enqueue(pending);
            DrainBacklogLocked();
        }
    }

    private void DrainBacklogLocked()
    {
        if (_connection is not { } connection)
        {
            return;
        }
        while (_backlog.Count > 0 && _pending.Count < _maxAckPending)
        {
            var pending = _backlog.Dequeue();
            var id = NextPacketIdLocked();
            BinaryPrimitives.WriteUInt16BigEndian(pending.Packet.AsSpan(pending.PacketIdOffset), id);
            pending.PacketId = id;
            pending.SentAt = Environment.TickCount64;
            _pending[id] = pending;
            connection.Outbound.Enqueue(pending.Packet);
            connection.CountOut(pending.PayloadLength);
        }
    }

    private ushort NextPacketIdLocked()
    {
        while (true)
        {
            _lastPacketId = _lastPacketId == ushort.MaxValue ? (ushort)1 : (ushort)(_lastPacketId + 1);
            if (!_pending.ContainsKey(_lastPacketId))
            {
                return _lastPacketId;
            }
        }
    }

    /// <summary>The QoS a NATS-side message carries in Go's "Nmqtt-Pub" header (0 without it).</summary>
    private static byte QosFromHeaders(ReadOnlySpan<byte> headers)
    {
        if (headers.IsEmpty)
        {
            return 0;
        }
        var index = headers.IndexOf("Nmqtt-Pub:"u8);
        if (index < 0)
        {
            return 0;
        }
        var rest = headers[(index + 10)..].TrimStart((byte)' ');
        return rest.Length > 0 && rest[0] is (byte)'1' or (byte)'2' ? (byte)(rest[0] - '0') : (byte)0;
    }

    /// <summary>One MQTT subscription and its receiver: encodes matches as PUBLISH packets for the session.</summary>
    private sealed class SubscriptionState(MqttSession session) : IMessageReceiver
    {
        public bool Deliver(Subscription subscription, in Message message) =>
            session.Deliver(this, message.Subject, message.Headers, message.Payload);

        public byte Qos;
        public Subscription Subscription = null!;
    }

    private sealed class PendingMessage(byte[] packet, int packetIdOffset, int payloadLength)
    {
        public byte[] Packet { get; } = packet;
        public int PacketIdOffset { get; } = packetIdOffset;
        public int PayloadLength { get; } = payloadLength;
        public long SentAt { get; set; }

        /// <summary>QoS 2: PUBREC came back, so PUBREL (not the PUBLISH) is what is resent until PUBCOMP.</summary>
        public bool Received { get; set; }

        public ushort PacketId { get; set; }
    }

    /// <summary>An inbound QoS 2 message held between PUBREC and PUBREL (Go 2.10 keeps it in $MQTT_qos2in).</summary>
    public sealed record InboundQos2(string Subject, byte[] Topic, byte[] Payload, bool Retain);

    private readonly Dictionary<ushort, InboundQos2> _inboundQos2 = [];

    /// <summary>Holds a QoS 2 PUBLISH until its PUBREL; a duplicate (same packet id) is not stored again.</summary>
    public void HoldInbound(ushort packetId, InboundQos2 message)
    {
        lock (_lock)
        {
            _inboundQos2.TryAdd(packetId, message);
        }
    }

    /// <summary>PUBREL: the held message, released once (null when already released).</summary>
    public InboundQos2? ReleaseInbound(ushort packetId)
    {
        lock (_lock)
        {
            return _inboundQos2.Remove(packetId, out var message) ? message : null;
        }
    }

    /// <summary>PUBREC from the subscriber: answer PUBREL and resend only that until PUBCOMP.</summary>
    public void Received(ushort packetId)
    {
        lock (_lock)
        {
            if (_pending.TryGetValue(packetId, out var pending))
            {
                pending.Received = true;
                pending.SentAt = Environment.TickCount64;
            }
            _connection?.Outbound.Enqueue([MqttPackets.PubRel | 0x02, 2, (byte)(packetId >> 8), (byte)packetId]);
        }
    }

    private static void Resend(MqttConnection connection, PendingMessage pending)
    {
        if (pending.Received)
        {
            connection.Outbound.Enqueue([MqttPackets.PubRel | 0x02, 2, (byte)(pending.PacketId >> 8), (byte)pending.PacketId]);
            return;
        }
        pending.Packet[0] |= MqttPackets.PubFlagDup;
        connection.Outbound.Enqueue(pending.Packet);
    }
}
