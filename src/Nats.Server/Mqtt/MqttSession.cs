using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;

namespace Nats.Server.Mqtt;

/// <summary>
/// The state of one MQTT client id, as Go's mqttSession: its filters and their consumers (<see cref="Filters"/>), what
/// is in flight to the client (<see cref="Delivery"/>), the internal client that publishes for it, and the connection
/// bound to it. What the client has not acknowledged survives a disconnect and a server restart and comes back with DUP.
/// </summary>
internal sealed class MqttSession
{
    private readonly Lock _lock = new();
    private readonly MqttInflight _inflight;
    private readonly MqttOptions _options;
    private volatile MqttConnection? _connection;

    /// <param name="sharedConsumerInUse">
    /// Whether a shared subscription's consumer (by durable name) is still held by a session other than the given one:
    /// the group's consumer is deleted only with its last member.
    /// </param>
    public MqttSession(string clientId, Account account, ClientConnection nats, MqttOptions options, MqttJetStream js, Func<MqttSession, string, bool> sharedConsumerInUse)
    {
        ClientId = clientId;
        IdHash = MqttJetStream.Hash(clientId);
        Account = account;
        Nats = nats;
        Publisher = new InternalPublisher(nats);
        _options = options;
        _inflight = new MqttInflight(options.EffectiveMaxAckPending);
        Origin = js.Origin;
        Filters = new MqttSessionFilters(this, options, js, sharedConsumerInUse);
        Delivery = new MqttSessionDelivery(this, _inflight);
        SourceLine = System.Text.Encoding.ASCII.GetBytes("Nmqtt-Src:" + IdHash + "\r\n");
    }

    /// <summary>The filters, their NATS subscriptions and consumers.</summary>
    public MqttSessionFilters Filters { get; }

    /// <summary>What goes to the client and what its acks settle.</summary>
    public MqttSessionDelivery Delivery { get; }

    /// <summary>Guards the filters, the in-flight packet ids and the binding; <see cref="Delivery"/> takes it too.</summary>
    internal Lock Lock => _lock;

    public string ClientId { get; }

    /// <summary>Go's idHash: names the session's record, its consumers and its PUBREL subjects.</summary>
    public string IdHash { get; }

    public Account Account { get; }

    /// <summary>The internal client that owns this session's NATS subscriptions and publishes for it.</summary>
    public ClientConnection Nats { get; }

    /// <summary>Publishes for this session as <see cref="Nats"/> (stallable: the MQTT connection awaits its stalls).</summary>
    public InternalPublisher Publisher { get; }

    /// <summary>Serializes <see cref="Publisher"/>, which the read loop, acks and a will (from whichever thread closes) share.</summary>
    public Lock PublishLock { get; } = new();

    /// <summary>The last CONNECT's clean session flag; a clean session ends with its connection.</summary>
    public bool Clean { get; set; }

    /// <summary>MQTT 5's session expiry interval in seconds while it can expire (null: 3.1.1, or 0xFFFFFFFF).</summary>
    public uint? ExpiryInterval { get; set; }

    /// <summary>When this detached session ends (Unix milliseconds), while an expiry is pending.</summary>
    public long? ExpiresAt { get; set; }

    /// <summary>An MQTT 5 will waiting for its delay while the session is detached (kept in its record across a restart).</summary>
    public MqttPersistedWill? PendingWill { get => Volatile.Read(ref _pendingWill); set => Volatile.Write(ref _pendingWill, value); }

    private MqttPersistedWill? _pendingWill;

    /// <summary>Counts attaches: a pending MQTT 5 expiry or delayed will applies only to the generation it was set for.</summary>
    public int Generation { get; private set; }

    /// <summary>Read without the lock on the QoS 0 path: a delivery racing a detach may still reach the closing socket.</summary>
    public MqttConnection? Connection => _connection;

    /// <summary>The header line naming this session as a stored message's publisher (MQTT 5 no local at QoS 1/2).</summary>
    public byte[] SourceLine { get; }

    private string Origin { get; }

    /// <summary>A session read back from <c>$MQTT_sess</c>: its filters and consumers, subscribed when a client attaches.</summary>
    public void Restore(MqttPersistedSession record)
    {
        Filters.Restore(record);
        ExpiryInterval = record.ExpiryInterval;
        ExpiresAt = record.ExpiresAt;
        PendingWill = record.Will;
    }

    /// <summary>Go's mqttPersistedSession for this session.</summary>
    public MqttPersistedSession ToRecord()
    {
        var record = new MqttPersistedSession
        {
            Origin = Origin,
            Id = ClientId,
            Clean = Clean,
            ExpiryInterval = ExpiryInterval,
            ExpiresAt = ExpiresAt,
            Will = PendingWill
        };
        Filters.WriteTo(record);
        return record;
    }

    /// <summary>Takes the pending will to send it (once: a timer and the session's end may race).</summary>
    public MqttPersistedWill? TakePendingWill() => Interlocked.Exchange(ref _pendingWill, null);

    /// <summary>Binds a connection: every filter and consumer is subscribed again (the consumers then deliver what is waiting).</summary>
    public void Attach(MqttConnection connection)
    {
        lock (_lock)
        {
            Generation++;
            _connection = connection;
            _inflight.Limit = Math.Min(_options.EffectiveMaxAckPending, connection.V5?.Connect.ReceiveMaximum ?? ushort.MaxValue);
            Filters.SubscribeAllLocked();
        }
    }

    /// <summary>
    /// Unbinds <paramref name="connection"/> if it is still the session's (returns whether it was): its
    /// subscriptions end with it, as Go's do with the client; a persistent session's consumers stay.
    /// </summary>
    public bool Detach(MqttConnection connection)
    {
        lock (_lock)
        {
            if (_connection != connection)
            {
                return false;
            }
            _connection = null;
            Filters.UnsubscribeAllLocked();
            return true;
        }
    }

    /// <summary>Removes every subscription, consumer and in-flight message (clean session, or a clean reconnect).</summary>
    public void Clear()
    {
        Filters.Clear();
        lock (_lock)
        {
            _inflight.Clear();
        }
    }

    /// <summary>Publishes of one read buffer (or a will) reach their receivers' sockets in one flush per receiver.</summary>
    public void FlushPublished()
    {
        lock (PublishLock)
        {
            Publisher.FlushBatch();
        }
    }
}
