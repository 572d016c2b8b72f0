using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.JetStream.Consumers;
using Nats.Server.Subscriptions;

namespace Nats.Server.Mqtt;

/// <summary>
/// The state of one MQTT client id, laid out as Go's mqttSession: each filter is a NATS subscription
/// (QoS 0 deliveries and NATS publishers' messages) and, for QoS 1/2, a durable JetStream consumer on
/// <c>$MQTT_msgs</c> whose deliveries carry the ack subject a PUBACK settles, so what the client has
/// not acknowledged survives a disconnect and a server restart and comes back with DUP. A QoS 2
/// subscriber's PUBRELs wait in <c>$MQTT_out</c> for PUBCOMP through one more consumer.
/// </summary>
internal sealed class MqttSession
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, MqttFilterState> _subscriptions = new(StringComparer.Ordinal);
    private readonly MqttInflight _inflight;
    private readonly MqttJetStream _js;
    private readonly MqttOptions _options;
    private volatile MqttConnection? _connection;
    private ConsumerConfig? _pubRelConsumer;
    private Subscription? _pubRelSubscription;
    private long _nextSid;
    private int _noLocalFilters;

    private readonly Func<MqttSession, string, bool> _sharedConsumerInUse;

    /// <param name="sharedConsumerInUse">
    /// Whether a shared subscription's consumer (by durable name) is still held by a session other than the given one:
    /// the group's consumer is deleted only with its last member.
    /// </param>
    public MqttSession(string clientId, Account account, ClientConnection nats, MqttOptions options, MqttJetStream js, Func<MqttSession, string, bool> sharedConsumerInUse)
    {
        _sharedConsumerInUse = sharedConsumerInUse;
        ClientId = clientId;
        IdHash = MqttJetStream.Hash(clientId);
        Account = account;
        Nats = nats;
        Publisher = new InternalPublisher(nats);
        _options = options;
        _js = js;
        _inflight = new MqttInflight(options.EffectiveMaxAckPending);
        Delivery = new MqttSessionDelivery(this, _inflight);
        SourceLine = System.Text.Encoding.ASCII.GetBytes("Nmqtt-Src:" + IdHash + "\r\n");
    }

    /// <summary>What goes to the client and what its acks settle.</summary>
    public MqttSessionDelivery Delivery { get; }

    /// <summary>Guards the filters, the in-flight packet ids and the binding; <see cref="Delivery"/> takes it too.</summary>
    internal Lock Lock => _lock;

    /// <summary>The PUBREL consumer of a QoS 2 subscriber (read under <see cref="Lock"/>).</summary>
    internal ConsumerConfig? PubRelConsumer => _pubRelConsumer;

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

    /// <summary>Counts attaches: a pending MQTT 5 expiry or delayed will applies only to the generation it was set for.</summary>
    public int Generation { get; private set; }

    /// <summary>Read without the lock on the QoS 0 path: a delivery racing a detach may still reach the closing socket.</summary>
    public MqttConnection? Connection => _connection;

    public int FilterCount
    {
        get
        {
            lock (_lock)
            {
                return _subscriptions.Keys.Count(k => !k.EndsWith(" fwc", StringComparison.Ordinal));
            }
        }
    }

    /// <summary>A session read back from <c>$MQTT_sess</c>: its filters and consumers, subscribed when a client attaches.</summary>
    public void Restore(MqttPersistedSession record)
    {
        lock (_lock)
        {
            foreach (var (sid, qos) in record.Subs ?? [])
            {
                _subscriptions[sid] = new MqttFilterState(this, sid, qos);
            }
            foreach (var (sid, consumer) in record.Cons ?? [])
            {
                if (!_subscriptions.TryGetValue(sid, out var state))
                {
                    // Go keys a "foo/#" filter's second subscription ("foo fwc") in cons only.
                    var qos = record.Subs?.GetValueOrDefault(sid.EndsWith(" fwc", StringComparison.Ordinal) ? sid[..^4] + ".>" : sid) ?? 1;
                    _subscriptions[sid] = state = new MqttFilterState(this, sid, qos);
                }
                state.Consumer = consumer;
            }
            _pubRelConsumer = record.PubRel;
            foreach (var (sid, options) in record.Options ?? [])
            {
                if (_subscriptions.TryGetValue(sid, out var state))
                {
                    state.Options = state.Options with { NoLocal = options.NoLocal, RetainAsPublished = options.RetainAsPublished, SubscriptionId = options.SubscriptionId };
                }
            }
            RecountNoLocalLocked();
        }
    }

    /// <summary>
    /// Some filter of this session has MQTT 5's no local: its client's QoS 1/2 publishes then carry
    /// <see cref="SourceLine"/> in their stored copy, which that filter's consumer delivery skips.
    /// </summary>
    public bool HasNoLocal => Volatile.Read(ref _noLocalFilters) > 0;

    /// <summary>The header line naming this session as a stored message's publisher.</summary>
    public byte[] SourceLine { get; }

    private void RecountNoLocalLocked() => Volatile.Write(ref _noLocalFilters, _subscriptions.Values.Count(s => s.Options.NoLocal));

    /// <summary>Go's mqttPersistedSession for this session.</summary>
    public MqttPersistedSession ToRecord()
    {
        lock (_lock)
        {
            var record = new MqttPersistedSession { Origin = _js.Origin, Id = ClientId, Clean = Clean, Subs = [], Cons = [], PubRel = _pubRelConsumer };
            foreach (var (sid, state) in _subscriptions)
            {
                if (!sid.EndsWith(" fwc", StringComparison.Ordinal))
                {
                    record.Subs[sid] = state.Qos;
                }
                if (state.Consumer is { } consumer)
                {
                    record.Cons[sid] = consumer;
                }
            }
            if (record.Subs.Count == 0)
            {
                record.Subs = null;
            }
            if (record.Cons.Count == 0)
            {
                record.Cons = null;
            }
            foreach (var (sid, state) in _subscriptions)
            {
                if (state.Options is { NoLocal: false, RetainAsPublished: false, SubscriptionId: 0 })
                {
                    continue;
                }
                (record.Options ??= [])[sid] = new MqttPersistedOptions
                {
                    NoLocal = state.Options.NoLocal,
                    RetainAsPublished = state.Options.RetainAsPublished,
                    SubscriptionId = state.Options.SubscriptionId,
                };
            }
            return record;
        }
    }

    /// <summary>Binds a connection: every filter and consumer is subscribed again (the consumers then deliver what is waiting).</summary>
    public void Attach(MqttConnection connection)
    {
        lock (_lock)
        {
            Generation++;
            _connection = connection;
            _inflight.Limit = Math.Min(_options.EffectiveMaxAckPending, connection.V5?.Connect.ReceiveMaximum ?? ushort.MaxValue);
            foreach (var state in _subscriptions.Values)
            {
                SubscribeLocked(state);
            }
            if (_pubRelConsumer is not null)
            {
                SubscribePubRelLocked();
            }
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
            foreach (var state in _subscriptions.Values)
            {
                UnsubscribeLocked(state);
            }
            if (_pubRelSubscription is not null)
            {
                Account.SubList.Remove(_pubRelSubscription);
                _pubRelSubscription.Closed = true;
                _pubRelSubscription = null;
            }
            return true;
        }
    }

    /// <summary>Removes every subscription, consumer and in-flight message (clean session, or a clean reconnect).</summary>
    public void Clear()
    {
        List<ConsumerConfig> consumers = [];
        string? pubRel;
        lock (_lock)
        {
            foreach (var state in _subscriptions.Values)
            {
                UnsubscribeLocked(state);
                if (state.Consumer is { } consumer)
                {
                    consumers.Add(consumer);
                }
            }
            _subscriptions.Clear();
            RecountNoLocalLocked();
            _inflight.Clear();
            pubRel = _pubRelConsumer?.Durable;
            _pubRelConsumer = null;
            if (_pubRelSubscription is not null)
            {
                Account.SubList.Remove(_pubRelSubscription);
                _pubRelSubscription.Closed = true;
                _pubRelSubscription = null;
            }
        }
        foreach (var consumer in consumers)
        {
            DropConsumer(consumer);
        }
        if (pubRel is not null)
        {
            _js.DeleteConsumer(Account, MqttJetStream.OutStream, pubRel);
        }
    }

    /// <summary>
    /// Adds or updates (QoS) the subscription <paramref name="sid"/> on <paramref name="subject"/>, with a
    /// durable consumer for QoS 1/2 (Go's processJSConsumer); false when the subject or the consumer is refused.
    /// </summary>
    public bool Subscribe(string subject, string sid, byte qos, MqttFilterOptions options = default)
    {
        MqttFilterState? state;
        ConsumerConfig? dropConsumer = null;
        lock (_lock)
        {
            if (_subscriptions.TryGetValue(sid, out state))
            {
                state.Qos = qos;
                state.Options = options;
                if (qos == 0 && state.Consumer is not null)
                {
                    dropConsumer = state.Consumer;
                    state.Consumer = null;
                    RemoveDelivery(state);
                }
            }
            else
            {
                state = new MqttFilterState(this, sid, qos, subject) { Options = options };
                _subscriptions[sid] = state;
            }
            RecountNoLocalLocked();
        }
        if (dropConsumer is not null)
        {
            DropConsumer(dropConsumer);
        }
        if (qos > 0 && state.Consumer is null)
        {
            // A shared subscription's members share one consumer, named after the group and filter, whose
            // deliveries go to one member each (its deliver group is the NATS queue of the members' subscriptions).
            var shareKey = options.Group is { } group ? MqttJetStream.Hash(group + " " + subject) : null;
            var config = _js.CreateConsumer(Account, MqttJetStream.MessagesStream, new ConsumerConfig
            {
                DeliverSubject = MqttJetStream.SubPrefix + (shareKey is null ? Nuid() : SharedPrefix + shareKey),
                DeliverGroup = options.Group,
                Durable = shareKey is null ? IdHash + "_" + Nuid() : SharedPrefix + shareKey,
                AckPolicy = AckPolicyKind.Explicit,
                DeliverPolicy = DeliverPolicy.New,
                FilterSubject = MqttJetStream.MessagesPrefix + subject,
                AckWait = (long)_options.EffectiveAckWait.TotalNanoseconds,
                MaxAckPending = _options.EffectiveMaxAckPending,
                MemoryStorage = _options.ConsumerMemoryStorage,
                InactiveThreshold = (long)_options.ConsumerInactiveThreshold.TotalNanoseconds,
            });
            if (config is null)
            {
                Unsubscribe(sid);
                return false;
            }
            lock (_lock)
            {
                state.Consumer = config;
            }
        }
        if (qos == 2 && !EnsurePubRelConsumer())
        {
            Unsubscribe(sid);
            return false;
        }
        lock (_lock)
        {
            return _connection is null || SubscribeLocked(state);
        }
    }

    public void Unsubscribe(string sid)
    {
        ConsumerConfig? consumer;
        lock (_lock)
        {
            if (!_subscriptions.Remove(sid, out var state))
            {
                return;
            }
            RecountNoLocalLocked();
            UnsubscribeLocked(state);
            consumer = state.Consumer;
        }
        if (consumer is not null)
        {
            DropConsumer(consumer);
        }
    }

    /// <summary>The shared subscriptions' consumer names start with it (a session's own start with its id hash).</summary>
    internal const string SharedPrefix = "share_";

    /// <summary>Whether this session holds the consumer <paramref name="durable"/> (a shared subscription's).</summary>
    public bool HoldsConsumer(string durable)
    {
        lock (_lock)
        {
            return _subscriptions.Values.Any(s => s.Consumer?.Durable == durable);
        }
    }

    /// <summary>
    /// Deletes a filter's consumer once the filter is gone: a session's own at once, a shared group's only when
    /// no other session holds it (checked after this session let go of it, so the last of two members leaving
    /// at once sees neither and deletes it).
    /// </summary>
    private void DropConsumer(ConsumerConfig consumer)
    {
        if (consumer.DeliverGroup is null || !_sharedConsumerInUse(this, consumer.Durable!))
        {
            _js.DeleteConsumer(Account, MqttJetStream.MessagesStream, consumer.Durable!);
        }
    }

    /// <summary>Whether the filter <paramref name="sid"/> exists (MQTT 5 retain handling 1).</summary>
    public bool HasFilter(string sid)
    {
        lock (_lock)
        {
            return _subscriptions.ContainsKey(sid);
        }
    }

    public string PubRelSubject => MqttJetStream.PubRelPrefix + IdHash;

    /// <summary>Publishes of one read buffer (or a will) reach their receivers' sockets in one flush per receiver.</summary>
    public void FlushPublished()
    {
        lock (PublishLock)
        {
            Publisher.FlushBatch();
        }
    }

    private bool EnsurePubRelConsumer()
    {
        lock (_lock)
        {
            if (_pubRelConsumer is not null)
            {
                if (_connection is not null)
                {
                    SubscribePubRelLocked();
                }
                return true;
            }
        }
        var config = _js.CreateConsumer(Account, MqttJetStream.OutStream, new ConsumerConfig
        {
            DeliverSubject = MqttJetStream.PubRelDeliveryPrefix + IdHash,
            Durable = MqttJetStream.PubRelDurablePrefix + IdHash,
            AckPolicy = AckPolicyKind.Explicit,
            DeliverPolicy = DeliverPolicy.New,
            FilterSubject = PubRelSubject,
            AckWait = (long)_options.EffectiveAckWait.TotalNanoseconds,
            MaxAckPending = _options.EffectiveMaxAckPending,
            MemoryStorage = _options.ConsumerMemoryStorage,
            InactiveThreshold = (long)_options.ConsumerInactiveThreshold.TotalNanoseconds,
        });
        if (config is null)
        {
            return false;
        }
        lock (_lock)
        {
            _pubRelConsumer = config;
            if (_connection is not null)
            {
                SubscribePubRelLocked();
            }
        }
        return true;
    }

    private bool SubscribeLocked(MqttFilterState state)
    {
        if (state.Plain is null)
        {
            var plain = NewSubscription(state.Subject, state.PlainReceiver, state.Options.Group);
            if (!Account.SubList.Insert(plain))
            {
                return false;
            }
            state.Plain = plain;
        }
        if (state.Consumer is { } consumer && state.Delivery is null)
        {
            var delivery = NewSubscription(consumer.DeliverSubject!, state.DeliveryReceiver, consumer.DeliverGroup);
            if (Account.SubList.Insert(delivery))
            {
                state.Delivery = delivery;
            }
        }
        return true;
    }

    private void UnsubscribeLocked(MqttFilterState state)
    {
        if (state.Plain is { } plain)
        {
            Account.SubList.Remove(plain);
            plain.Closed = true;
            state.Plain = null;
        }
        RemoveDelivery(state);
    }

    private void RemoveDelivery(MqttFilterState state)
    {
        if (state.Delivery is { } delivery)
        {
            Account.SubList.Remove(delivery);
            delivery.Closed = true;
            state.Delivery = null;
        }
    }

    private void SubscribePubRelLocked()
    {
        if (_pubRelSubscription is null && _pubRelConsumer is { } consumer)
        {
            var subscription = NewSubscription(consumer.DeliverSubject!, new MqttPubRelReceiver(this));
            if (Account.SubList.Insert(subscription))
            {
                _pubRelSubscription = subscription;
            }
        }
    }

    private Subscription NewSubscription(string subject, MessageReceiver receiver, string? queue = null)
    {
        var sid = Encoding.ASCII.GetBytes(Interlocked.Increment(ref _nextSid).ToString(System.Globalization.CultureInfo.InvariantCulture));
        // The receiver answers to the session's internal client (sid, /connz, removal); a shared subscription is a queue member.
        return new Subscription(receiver, Encoding.UTF8.GetBytes(subject), queue is null ? null : Encoding.UTF8.GetBytes(queue), sid);
    }

    private static string Nuid() => Guid.NewGuid().ToString("N")[..22];
}
