using System.Text.Json.Serialization;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.Mqtt;

/// <summary>
/// Go's mqttPersistedSession, the JSON of a session in <c>$MQTT_sess</c>: the filters (subject → QoS),
/// the durable consumer of each QoS 1/2 subscription (by subscription id) and the PUBREL consumer.
/// </summary>
internal sealed class MqttPersistedSession
{
    [JsonPropertyName("origin")] public string? Origin { get; set; }
    [JsonPropertyName("id")] public string? Id { get; set; }

    [JsonPropertyName("clean")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Clean { get; set; }

    [JsonPropertyName("subs")] public Dictionary<string, byte>? Subs { get; set; }
    [JsonPropertyName("cons")] public Dictionary<string, ConsumerConfig>? Cons { get; set; }
    [JsonPropertyName("pubrel")] public ConsumerConfig? PubRel { get; set; }

    /// <summary>Ours: MQTT 5 subscription options by filter (Go ignores the field), so they survive a reconnect and a restart.</summary>
    [JsonPropertyName("nmqtt_opts")] public Dictionary<string, MqttPersistedOptions>? Options { get; set; }

    /// <summary>Ours: an MQTT 5 session's expiry interval in seconds (absent: never expires), so that a session whose
    /// server stopped under its connection still ends that long after the restart.</summary>
    [JsonPropertyName("nmqtt_sei")] public uint? ExpiryInterval { get; set; }

    /// <summary>Ours: when a detached MQTT 5 session ends (Unix milliseconds), so that its expiry survives a restart.</summary>
    [JsonPropertyName("nmqtt_expires")] public long? ExpiresAt { get; set; }

    /// <summary>Ours: an MQTT 5 will waiting for its delay interval, so that a restart still sends it when due.</summary>
    [JsonPropertyName("nmqtt_will")] public MqttPersistedWill? Will { get; set; }
}

/// <summary>A delayed MQTT 5 will as <c>$MQTT_sess</c> keeps it, with when it is due.</summary>
internal sealed class MqttPersistedWill
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("topic")] public byte[] Topic { get; set; } = [];
    [JsonPropertyName("msg")] public byte[] Message { get; set; } = [];
    [JsonPropertyName("qos"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public byte Qos { get; set; }
    [JsonPropertyName("retain"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Retain { get; set; }
    [JsonPropertyName("lines")] public byte[]? Lines { get; set; }

    /// <summary>Unix milliseconds.</summary>
    [JsonPropertyName("due")] public long Due { get; set; }
}

/// <summary>An MQTT 5 filter's options as <c>$MQTT_sess</c> keeps them (a shared filter's group is in its key).</summary>
internal sealed class MqttPersistedOptions
{
    [JsonPropertyName("nl"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool NoLocal { get; set; }
    [JsonPropertyName("rap"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool RetainAsPublished { get; set; }
    [JsonPropertyName("sid"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int SubscriptionId { get; set; }
}

/// <summary>Go 2.10's mqttRetainedMsg, the JSON of a retained message in <c>$MQTT_rmsgs</c>.</summary>
internal sealed class MqttRetainedRecord
{
    [JsonPropertyName("origin")] public string? Origin { get; set; }
    [JsonPropertyName("subject")] public string? Subject { get; set; }
    [JsonPropertyName("topic")] public string? Topic { get; set; }
    [JsonPropertyName("msg")] public byte[]? Message { get; set; }

    [JsonPropertyName("flags")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public byte Flags { get; set; }

    [JsonPropertyName("source")] public string? Source { get; set; }

    /// <summary>Ours: an MQTT 5 message's properties as NATS header lines (Go ignores the field).</summary>
    [JsonPropertyName("nmqtt_lines")] public byte[]? Lines { get; set; }

    [JsonIgnore] public byte Qos => (byte)((Flags & MqttPackets.PubFlagQos) >> 1);
}

[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull, PropertyNameCaseInsensitive = true)]
[JsonSerializable(typeof(MqttPersistedSession))]
[JsonSerializable(typeof(MqttRetainedRecord))]
internal sealed partial class MqttJsonContext : JsonSerializerContext;
