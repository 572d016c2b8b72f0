using System.Text;
using Nats.Server.Delivery;
using Nats.Server.JetStream.Consumers;
using Nats.Server.Subscriptions;

namespace Nats.Server.Mqtt;

/// <summary>
/// One session's filters, laid out as Go's mqttSession keeps them: each is a NATS subscription (QoS 0 deliveries and
/// NATS publishers' messages) and, for QoS 1/2, a durable consumer on <c>$MQTT_msgs</c> whose deliver subject the
/// session subscribes while a connection is bound; a QoS 2 subscriber's PUBRELs come through one more consumer on
/// <c>$MQTT_out</c>. Guarded by the session's lock.
/// </summary>
internal sealed class MqttSessionFilters
{
    /// <summary>The shared subscriptions' consumer names start with it (a session's own start with its id hash).</summary>
    internal const string SharedPrefix = "share_";

    private readonly MqttSession _session;
    private readonly MqttOptions _options;
    private readonly MqttJetStream _js;
    private readonly Func<MqttSession, string, bool> _sharedConsumerInUse;
    private readonly Dictionary<string, MqttFilterState> _subscriptions = new(StringComparer.Ordinal);
    private ConsumerConfig? _pubRelConsumer;
    private Subscription? _pubRelSubscription;
    private long _nextSid;
    private int _noLocalFilters;

    public MqttSessionFilters(MqttSession session, MqttOptions options, MqttJetStream js, Func<MqttSession, string, bool> sharedConsumerInUse)
    {
        _session = session;
        _options = options;
        _js = js;
        _sharedConsumerInUse = sharedConsumerInUse;
    }

    private Lock SessionLock => _session.Lock;

    /// <summary>The PUBREL consumer of a QoS 2 subscriber (read under the session's lock).</summary>
    public ConsumerConfig? PubRelConsumer => _pubRelConsumer;

    public string PubRelSubject => MqttJetStream.PubRelPrefix + _session.IdHash;

    /// <summary>
    /// Some filter of this session has MQTT 5's no local: its client's QoS 1/2 publishes then carry
    /// <see cref="MqttSession.SourceLine"/> in their stored copy, which that filter's consumer delivery skips.
    /// </summary>
    public bool HasNoLocal => Volatile.Read(ref _noLocalFilters) > 0;

    public int Count
    {
        get
        {
            lock (SessionLock)
            {
                return _subscriptions.Keys.Count(k => !k.EndsWith(" fwc", StringComparison.Ordinal));
            }
        }
    }

    /// <summary>A session read back from <c>$MQTT_sess</c>: its filters and consumers, subscribed when a client attaches.</summary>
    public void Restore(MqttPersistedSession record)
    {
        lock (SessionLock)
        {
            foreach (var (sid, qos) in record.Subs ?? [])
            {
                _subscriptions[sid] = new MqttFilterState(_session, sid, qos);
            }
            foreach (var (sid, consumer) in record.Cons ?? [])
            {
                if (!_subscriptions.TryGetValue(sid, out var state))
                {
                    // Go keys a "foo/#" filter's second subscription ("foo fwc") in cons only.
                    var qos = record.Subs?.GetValueOrDefault(sid.EndsWith(" fwc", StringComparison.Ordinal) ? sid[..^4] + ".>" : sid) ?? 1;
                    _subscriptions[sid] = state = new MqttFilterState(_session, sid, qos);
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

    /// <summary>Fills Go's mqttPersistedSession fields for the filters (and our options map).</summary>
    public void WriteTo(MqttPersistedSession record)
    {
        lock (SessionLock)
        {
            record.Subs = [];
            record.Cons = [];
            record.PubRel = _pubRelConsumer;
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
                if (state.Options is not { NoLocal: false, RetainAsPublished: false, SubscriptionId: 0 })
                {
                    (record.Options ??= [])[sid] = new MqttPersistedOptions
                    {
                        NoLocal = state.Options.NoLocal,
                        RetainAsPublished = state.Options.RetainAsPublished,
                        SubscriptionId = state.Options.SubscriptionId,
                    };
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
        }
    }

    /// <summary>A connection was bound (under the session's lock): every filter and consumer is subscribed again.</summary>
    public void SubscribeAllLocked()
    {
        foreach (var state in _subscriptions.Values)
        {
            SubscribeLocked(state);
        }
        if (_pubRelConsumer is not null)
        {
            SubscribePubRelLocked();
        }
    }

    /// <summary>The connection went (under the session's lock): its subscriptions end with it; the consumers stay.</summary>
    public void UnsubscribeAllLocked()
    {
        foreach (var state in _subscriptions.Values)
        {
            UnsubscribeLocked(state);
        }
        RemovePubRelSubscriptionLocked();
    }

    /// <summary>Removes every filter and its consumer (clean session, or a clean reconnect).</summary>
    public void Clear()
    {
        List<ConsumerConfig> consumers = [];
        string? pubRel;
        lock (SessionLock)
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
            pubRel = _pubRelConsumer?.Durable;
            _pubRelConsumer = null;
            RemovePubRelSubscriptionLocked();
        }
        foreach (var consumer in consumers)
        {
            DropConsumer(consumer);
        }
        if (pubRel is not null)
        {
            _js.DeleteConsumer(_session.Account, MqttJetStream.OutStream, pubRel);
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
        lock (SessionLock)
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
                state = new MqttFilterState(_session, sid, qos, subject) { Options = options };
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
            var config = _js.CreateConsumer(_session.Account, MqttJetStream.MessagesStream, new ConsumerConfig
            {
                DeliverSubject = MqttJetStream.SubPrefix + (shareKey is null ? Nuid() : SharedPrefix + shareKey),
                DeliverGroup = options.Group,
                Durable = shareKey is null ? _session.IdHash + "_" + Nuid() : SharedPrefix + shareKey,
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
            lock (SessionLock)
            {
                state.Consumer = config;
            }
        }
        if (qos == 2 && !EnsurePubRelConsumer())
        {
            Unsubscribe(sid);
            return false;
        }
        lock (SessionLock)
        {
            return _session.Connection is null || SubscribeLocked(state);
        }
    }

    public void Unsubscribe(string sid)
    {
        ConsumerConfig? consumer;
        lock (SessionLock)
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

    /// <summary>Whether the filter <paramref name="sid"/> exists (MQTT 5 retain handling 1).</summary>
    public bool Contains(string sid)
    {
        lock (SessionLock)
        {
            return _subscriptions.ContainsKey(sid);
        }
    }

    /// <summary>Whether this session holds the consumer <paramref name="durable"/> (a shared subscription's).</summary>
    public bool HoldsConsumer(string durable)
    {
        lock (SessionLock)
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
        if (consumer.DeliverGroup is null || !_sharedConsumerInUse(_session, consumer.Durable!))
        {
            _js.DeleteConsumer(_session.Account, MqttJetStream.MessagesStream, consumer.Durable!);
        }
    }

    private void RecountNoLocalLocked() => Volatile.Write(ref _noLocalFilters, _subscriptions.Values.Count(s => s.Options.NoLocal));

    private bool EnsurePubRelConsumer()
    {
        lock (SessionLock)
        {
            if (_pubRelConsumer is not null)
            {
                if (_session.Connection is not null)
                {
                    SubscribePubRelLocked();
                }
                return true;
            }
        }
        var config = _js.CreateConsumer(_session.Account, MqttJetStream.OutStream, new ConsumerConfig
        {
            DeliverSubject = MqttJetStream.PubRelDeliveryPrefix + _session.IdHash,
            Durable = MqttJetStream.PubRelDurablePrefix + _session.IdHash,
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
        lock (SessionLock)
        {
            _pubRelConsumer = config;
            if (_session.Connection is not null)
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
            if (!_session.Account.SubList.Insert(plain))
            {
                return false;
            }
            state.Plain = plain;
        }
        if (state.Consumer is { } consumer && state.Delivery is null)
        {
            var delivery = NewSubscription(consumer.DeliverSubject!, state.DeliveryReceiver, consumer.DeliverGroup);
            if (_session.Account.SubList.Insert(delivery))
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
            _session.Account.SubList.Remove(plain);
            plain.Closed = true;
            state.Plain = null;
        }
        RemoveDelivery(state);
    }

    private void RemoveDelivery(MqttFilterState state)
    {
        if (state.Delivery is { } delivery)
        {
            _session.Account.SubList.Remove(delivery);
            delivery.Closed = true;
            state.Delivery = null;
        }
    }

    private void RemovePubRelSubscriptionLocked()
    {
        if (_pubRelSubscription is not null)
        {
            _session.Account.SubList.Remove(_pubRelSubscription);
            _pubRelSubscription.Closed = true;
            _pubRelSubscription = null;
        }
    }

    private void SubscribePubRelLocked()
    {
        if (_pubRelSubscription is null && _pubRelConsumer is { } consumer)
        {
            var subscription = NewSubscription(consumer.DeliverSubject!, new MqttPubRelReceiver(_session));
            if (_session.Account.SubList.Insert(subscription))
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
