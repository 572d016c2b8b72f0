using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.JetStream;
using Nats.Server.JetStream.Api;

namespace Nats.Server.Mqtt;

/// <summary>A persistent session's record in <c>$MQTT_sess</c>: client id and subscriptions (sid → subject and QoS).</summary>
internal sealed class MqttSessionRecord
{
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("subs")] public Dictionary<string, MqttSubscriptionRecord> Subscriptions { get; set; } = [];
}

internal sealed class MqttSubscriptionRecord
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("qos")] public byte Qos { get; set; }
}

/// <summary>A retained message's record in <c>$MQTT_rmsgs</c>.</summary>
internal sealed class MqttRetainedRecord
{
    [JsonPropertyName("topic")] public byte[] Topic { get; set; } = [];
    [JsonPropertyName("qos")] public byte Qos { get; set; }
    [JsonPropertyName("msg")] public byte[] Message { get; set; } = [];
}

[JsonSerializable(typeof(MqttSessionRecord))]
[JsonSerializable(typeof(MqttRetainedRecord))]
internal sealed partial class MqttJsonContext : JsonSerializerContext;

/// <summary>
/// Keeps persistent sessions and retained messages in JetStream streams named as Go names them
/// (<c>$MQTT_sess</c>, <c>$MQTT_rmsgs</c>; one message per subject), written by publishing into the
/// streams' subjects through the account's MQTT internal client and read back when the server
/// starts, so both survive a restart. The record formats are ours (JSON), not Go's.
/// </summary>
internal sealed class MqttPersistence
{
    public const string SessionStream = "$MQTT_sess";
    public const string SessionPrefix = "$MQTT.sess.";
    public const string RetainedStream = "$MQTT_rmsgs";
    public const string RetainedPrefix = "$MQTT.rmsgs.";

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly Dictionary<string, ClientConnection?> _writers = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();

    public MqttPersistence(NatsServer server, ILogger logger)
    {
        _server = server;
        _logger = logger;
    }

    public void SaveSession(MqttSession session, MqttSessionRecord? record)
    {
        var payload = record is null ? [] : JsonSerializer.SerializeToUtf8Bytes(record, MqttJsonContext.Default.MqttSessionRecord);
        Write(session.Account, SessionPrefix + Hash(session.ClientId), payload);
    }

    public void SaveRetained(Account account, string subject, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos)
    {
        var record = payload.IsEmpty ? [] : JsonSerializer.SerializeToUtf8Bytes(
            new MqttRetainedRecord { Topic = topic.ToArray(), Qos = qos, Message = payload.ToArray() }, MqttJsonContext.Default.MqttRetainedRecord);
        Write(account, RetainedPrefix + subject, record);
    }

    /// <summary>Every stored session record and retained message of <paramref name="account"/>.</summary>
    public (List<MqttSessionRecord> Sessions, List<(string Subject, MqttRetainedRecord Record)> Retained) Load(Account account)
    {
        var sessions = new List<MqttSessionRecord>();
        var retained = new List<(string, MqttRetainedRecord)>();
        if (_server.JetStream?.FindAccount(account) is not { } js)
        {
            return (sessions, retained);
        }
        foreach (var (data, subject) in ReadAll(js.FindStream(SessionStream)))
        {
            if (data.Length > 0 && JsonSerializer.Deserialize(data, MqttJsonContext.Default.MqttSessionRecord) is { } record)
            {
                sessions.Add(record);
            }
        }
        foreach (var (data, subject) in ReadAll(js.FindStream(RetainedStream)))
        {
            if (data.Length > 0 && JsonSerializer.Deserialize(data, MqttJsonContext.Default.MqttRetainedRecord) is { } record)
            {
                retained.Add((subject[RetainedPrefix.Length..], record));
            }
        }
        return (sessions, retained);
    }

    private static IEnumerable<(byte[] Data, string Subject)> ReadAll(JsStream? stream)
    {
        if (stream is null)
        {
            yield break;
        }
        var seq = 1UL;
        while (stream.Store.LoadNextMsg(">", seq) is { } message)
        {
            yield return (message.Data.ToArray(), message.Subject);
            seq = message.Sequence + 1;
        }
    }

    private void Write(Account account, string subject, byte[] payload)
    {
        var writer = Writer(account);
        if (writer is null)
        {
            return;
        }
        lock (writer)
        {
            writer.PublishInternal(account, Encoding.UTF8.GetBytes(subject), default, default, payload, replySet: false);
        }
    }

    /// <summary>The account's writer, creating the two streams the first time (null when the account has no JetStream).</summary>
    private ClientConnection? Writer(Account account)
    {
        lock (_lock)
        {
            if (_writers.TryGetValue(account.Name, out var existing))
            {
                return existing;
            }
            ClientConnection? writer = null;
            if (_server.JetStream?.FindAccount(account) is { } js)
            {
                try
                {
                    js.AddStream(new StreamConfig { Name = SessionStream, Subjects = [SessionPrefix + ">"], MaxMsgsPerSubject = 1, Storage = StorageKind.File, Replicas = 1 });
                    js.AddStream(new StreamConfig { Name = RetainedStream, Subjects = [RetainedPrefix + ">"], MaxMsgsPerSubject = 1, Storage = StorageKind.File, Replicas = 1 });
                    writer = ClientConnection.CreateInternal(_server, 0, account, _logger);
                }
                catch (JsApiException e)
                {
                    _logger.LogError("Unable to create MQTT streams for account {Account}: {Error}", account.Name, e.Message);
                }
            }
            _writers[account.Name] = writer;
            return writer;
        }
    }

    private static string Hash(string clientId) => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(clientId)))[..32];
}
