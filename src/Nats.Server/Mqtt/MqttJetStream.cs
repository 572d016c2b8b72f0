using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Delivery;
using Nats.Server.Hosting;
using Nats.Server.JetStream;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;
using Nats.Storage;

namespace Nats.Server.Mqtt;

/// <summary>
/// The MQTT state Go keeps in JetStream, per account, under Go's stream names, subjects and record
/// formats so a store written by one server is read by the other: sessions (<c>$MQTT_sess</c>),
/// QoS 1/2 messages for subscriptions (<c>$MQTT_msgs</c>, one durable consumer per subscription),
/// retained messages (<c>$MQTT_rmsgs</c>), incoming QoS 2 messages awaiting PUBREL
/// (<c>$MQTT_qos2in</c>) and outgoing PUBRELs awaiting PUBCOMP (<c>$MQTT_out</c>).
/// </summary>
internal sealed class MqttJetStream
{
    public const string MessagesStream = "$MQTT_msgs";
    public const string MessagesPrefix = "$MQTT.msgs.";
    public const string SessionStream = "$MQTT_sess";
    public const string SessionPrefix = "$MQTT.sess.";
    public const string RetainedStream = "$MQTT_rmsgs";
    public const string RetainedPrefix = "$MQTT.rmsgs.";
    public const string Qos2InStream = "$MQTT_qos2in";
    public const string Qos2InPrefix = "$MQTT.qos2.in.";
    public const string OutStream = "$MQTT_out";
    public const string PubRelPrefix = "$MQTT.out.pubrel.";
    public const string PubRelDeliveryPrefix = "$MQTT.deliver.pubrel.";
    public const string PubRelDurablePrefix = "$MQTT_PUBREL_";
    public const string SubPrefix = "$MQTT.sub.";

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly Dictionary<string, AccountState?> _accounts = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();
    private volatile bool _sharedConsumers;

    public MqttJetStream(NatsServer server, ILogger logger)
    {
        _server = server;
        _logger = logger;
        Origin = Hash(server.ServerName);
    }

    /// <summary>Go's "origin" of the records this server writes (its JetStream id).</summary>
    public string Origin { get; }

    /// <summary>
    /// Whether some account has a shared subscription's consumer on <c>$MQTT_msgs</c> (created, or found when the
    /// account's streams were opened): only then do QoS 1/2 publishes mark which groups their NATS fan-out served.
    /// </summary>
    public bool HasSharedConsumers => _sharedConsumers;

    /// <summary>Go's getHash: the first 8 bytes of the SHA-256 of <paramref name="value"/>, each taken modulo 62 into [0-9A-Za-z].</summary>
    public static string Hash(string value) => NameHash.Of(value);

    /// <summary>Stores a message in one of the account's MQTT streams (through the account's writer); the stream's
    /// PubAck goes to <paramref name="reply"/> when given. Returns whether a stream received it.</summary>
    public bool Store(Account account, string subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, ReadOnlySpan<byte> reply = default)
    {
        if (For(account) is not { } state)
        {
            return false;
        }
        lock (state.Writer)
        {
            return state.Writer.Publish(account, Encoding.UTF8.GetBytes(subject), reply, headers, payload);
        }
    }

    public StoredMessage? LoadLast(Account account, string stream, string subject) =>
        For(account)?.Js.FindStream(stream)?.Store.LoadLastMsg(subject);

    /// <summary>Completes once everything already written to <paramref name="stream"/> is durable (complete when there is no such stream).</summary>
    public DurabilityTicket WhenDurable(Account account, string stream) =>
        For(account)?.Js.FindStream(stream)?.Store.WhenDurable() ?? DurabilityTicket.Completed;

    public void Delete(Account account, string stream, ulong seq) => For(account)?.Js.FindStream(stream)?.RemoveMsg(seq, erase: false);

    /// <summary>Creates (or finds) a durable push consumer and starts it; null (logged) when JetStream refuses it.</summary>
    public ConsumerConfig? CreateConsumer(Account account, string stream, ConsumerConfig config)
    {
        if (For(account)?.Js.FindStream(stream) is not { } target)
        {
            return null;
        }
        try
        {
            var consumer = target.Consumers.Add(config);
            consumer.Run();
            if (config.DeliverGroup is not null)
            {
                _sharedConsumers = true;
            }
            return config;
        }
        catch (Exception e) when (e is JsApiException or IOException or StoreException)
        {
            _logger.LogError("Unable to add JetStream consumer {Durable} on {Stream}: {Error}", config.Durable, stream, e.Message);
            return null;
        }
    }

    public void DeleteConsumer(Account account, string stream, string durable)
    {
        if (For(account)?.Js.FindStream(stream) is { } target && target.Consumers.Find(durable) is { } consumer)
        {
            target.Consumers.Delete(consumer, advisory: true);
        }
    }

    public MqttPersistedSession? LoadSession(Account account, string idHash)
    {
        if (LoadLast(account, SessionStream, SessionPrefix + idHash) is not { } message || message.Data.IsEmpty)
        {
            return null;
        }
        try
        {
            return JsonSerializer.Deserialize(message.Data.Span, MqttJsonContext.Default.MqttPersistedSession);
        }
        catch (JsonException e)
        {
            _logger.LogWarning("MQTT: unreadable session record {Subject}: {Error}", SessionPrefix + idHash, e.Message);
            return null;
        }
    }

    /// <summary>Every session record of <paramref name="account"/> with its id hash (unreadable ones skipped).</summary>
    public List<(string IdHash, MqttPersistedSession Record)> LoadSessions(Account account)
    {
        var sessions = new List<(string, MqttPersistedSession)>();
        if (For(account)?.Js.FindStream(SessionStream) is not { } stream)
        {
            return sessions;
        }
        var seq = 1UL;
        while (stream.Store.LoadNextMsg(">", seq) is { } message)
        {
            seq = message.Sequence + 1;
            try
            {
                if (!message.Data.IsEmpty && JsonSerializer.Deserialize(message.Data.Span, MqttJsonContext.Default.MqttPersistedSession) is { } record)
                {
                    sessions.Add((message.Subject[SessionPrefix.Length..], record));
                }
            }
            catch (JsonException)
            {
                // LoadSession logs an unreadable record when its client connects.
            }
        }
        return sessions;
    }

    public void SaveSession(Account account, string idHash, MqttPersistedSession record) =>
        Store(account, SessionPrefix + idHash, default, JsonSerializer.SerializeToUtf8Bytes(record, MqttJsonContext.Default.MqttPersistedSession));

    /// <summary>Go deletes a clean session's record rather than writing an empty one.</summary>
    public void DeleteSession(Account account, string idHash)
    {
        if (LoadLast(account, SessionStream, SessionPrefix + idHash) is { } message)
        {
            Delete(account, SessionStream, message.Sequence);
        }
    }

    public void SaveRetained(Account account, string subject, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ReadOnlySpan<byte> lines = default)
    {
        if (payload.IsEmpty)
        {
            if (LoadLast(account, RetainedStream, RetainedPrefix + subject) is { } old)
            {
                Delete(account, RetainedStream, old.Sequence);
            }
            return;
        }
        var record = new MqttRetainedRecord
        {
            Origin = Origin,
            Subject = subject,
            Topic = Encoding.UTF8.GetString(topic),
            Message = payload.ToArray(),
            Flags = (byte)((qos << 1) | MqttPackets.PubFlagRetain),
            Lines = lines.IsEmpty ? null : lines.ToArray(),
        };
        Store(account, RetainedPrefix + subject, default, JsonSerializer.SerializeToUtf8Bytes(record, MqttJsonContext.Default.MqttRetainedRecord));
    }

    /// <summary>Every retained message of <paramref name="account"/> (read when the server starts, as Go loads them).</summary>
    public List<MqttRetainedRecord> LoadRetained(Account account)
    {
        var retained = new List<MqttRetainedRecord>();
        if (For(account)?.Js.FindStream(RetainedStream) is not { } stream)
        {
            return retained;
        }
        var seq = 1UL;
        while (stream.Store.LoadNextMsg(">", seq) is { } message)
        {
            seq = message.Sequence + 1;
            try
            {
                if (!message.Data.IsEmpty && JsonSerializer.Deserialize(message.Data.Span, MqttJsonContext.Default.MqttRetainedRecord) is { } record)
                {
                    record.Subject ??= message.Subject[RetainedPrefix.Length..];
                    retained.Add(record);
                }
            }
            catch (JsonException e)
            {
                _logger.LogWarning("MQTT: unreadable retained message {Subject}: {Error}", message.Subject, e.Message);
            }
        }
        return retained;
    }

    /// <summary>The account's streams, created the first time as Go creates them (null without JetStream).</summary>
    private AccountState? For(Account account)
    {
        lock (_lock)
        {
            if (_accounts.TryGetValue(account.Name, out var existing))
            {
                return existing;
            }
            AccountState? state = null;
            if (_server.JetStream?.FindAccount(account) is { } js)
            {
                try
                {
                    var replicas = 1;
                    Ensure(js, new StreamConfig { Name = SessionStream, Subjects = [SessionPrefix + ">"], Storage = StorageKind.File, Retention = RetentionPolicy.Limits, Replicas = replicas, MaxMsgsPerSubject = 1 });
                    Ensure(js, new StreamConfig { Name = MessagesStream, Subjects = [MessagesPrefix + ">"], Storage = StorageKind.File, Retention = RetentionPolicy.Interest, Replicas = replicas });
                    Ensure(js, new StreamConfig { Name = RetainedStream, Subjects = [RetainedPrefix + ">"], Storage = StorageKind.File, Retention = RetentionPolicy.Limits, Replicas = replicas });
                    Ensure(js, new StreamConfig
                    {
                        Name = Qos2InStream,
                        Subjects = [Qos2InPrefix + ">"],
                        Storage = StorageKind.File,
                        Retention = RetentionPolicy.Limits,
                        Discard = Nats.Storage.DiscardPolicy.New,
                        MaxMsgsPerSubject = 1,
                        DiscardNewPerSubject = true,
                        Replicas = replicas,
                    });
                    Ensure(js, new StreamConfig { Name = OutStream, Subjects = ["$MQTT.out.>"], Storage = StorageKind.File, Retention = RetentionPolicy.Interest, Replicas = replicas });
                    state = new AccountState(js, _server.CreateInternalPublisher());
                    if (js.FindStream(MessagesStream)?.Consumers.All.Any(c => c.Config.DeliverGroup is not null) == true)
                    {
                        _sharedConsumers = true;
                    }
                }
                catch (JsApiException e)
                {
                    _logger.LogError("Unable to create MQTT streams for account {Account}: {Error}", account.Name, e.Message);
                }
            }
            _accounts[account.Name] = state;
            return state;
        }
    }

    private static void Ensure(JsAccount js, StreamConfig config)
    {
        if (js.FindStream(config.Name) is null)
        {
            js.AddStream(config);
        }
    }

    private sealed record AccountState(JsAccount Js, InternalPublisher Writer);
}
