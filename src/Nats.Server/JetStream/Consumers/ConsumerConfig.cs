using System.Text.Json;
using System.Text.Json.Serialization;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Consumers;

/// <summary>Go 2.9's ConsumerConfig as it marshals: durations in nanoseconds, omitempty where Go has it.</summary>
internal sealed class ConsumerConfig
{
    [JsonPropertyName("durable_name")] public string? Durable { get; set; }
    [JsonPropertyName("name")] public string? Name { get; set; }
    [JsonPropertyName("description")] public string? Description { get; set; }
    [JsonPropertyName("deliver_policy")] public DeliverPolicy DeliverPolicy { get; set; }

    [JsonPropertyName("opt_start_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong OptStartSeq { get; set; }

    [JsonPropertyName("opt_start_time")] public GoTime? OptStartTime { get; set; }
    [JsonPropertyName("ack_policy")] public AckPolicyKind AckPolicy { get; set; }

    [JsonPropertyName("ack_wait")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long AckWait { get; set; }

    [JsonPropertyName("max_deliver")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxDeliver { get; set; }

    [JsonPropertyName("backoff")] public List<long>? BackOff { get; set; }
    [JsonPropertyName("filter_subject")] public string? FilterSubject { get; set; }
    [JsonPropertyName("replay_policy")] public ReplayPolicy ReplayPolicy { get; set; }

    [JsonPropertyName("rate_limit_bps")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong RateLimit { get; set; }

    [JsonPropertyName("sample_freq")] public string? SampleFrequency { get; set; }

    [JsonPropertyName("max_waiting")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxWaiting { get; set; }

    [JsonPropertyName("max_ack_pending")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxAckPending { get; set; }

    [JsonPropertyName("idle_heartbeat")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long Heartbeat { get; set; }

    [JsonPropertyName("flow_control")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool FlowControl { get; set; }

    [JsonPropertyName("headers_only")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool HeadersOnly { get; set; }

    [JsonPropertyName("max_batch")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestBatch { get; set; }

    [JsonPropertyName("max_expires")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long MaxRequestExpires { get; set; }

    [JsonPropertyName("max_bytes")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestMaxBytes { get; set; }

    [JsonPropertyName("deliver_subject")] public string? DeliverSubject { get; set; }
    [JsonPropertyName("deliver_group")] public string? DeliverGroup { get; set; }

    [JsonPropertyName("inactive_threshold")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long InactiveThreshold { get; set; }

    [JsonPropertyName("num_replicas")] public int Replicas { get; set; }

    [JsonPropertyName("mem_storage")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool MemoryStorage { get; set; }

    [JsonPropertyName("direct")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Direct { get; set; }

    [JsonIgnore] public bool IsPush => !string.IsNullOrEmpty(DeliverSubject);

    [JsonIgnore] public bool IsDurable => !string.IsNullOrEmpty(Durable);

    [JsonIgnore] public string Filter => FilterSubject ?? "";

    public ConsumerConfig Clone()
    {
        var copy = (ConsumerConfig)MemberwiseClone();
        copy.BackOff = BackOff is null ? null : [.. BackOff];
        return copy;
    }
}

[JsonConverter(typeof(DeliverPolicyConverter))]
internal enum DeliverPolicy { All, Last, New, ByStartSequence, ByStartTime, LastPerSubject }

[JsonConverter(typeof(AckPolicyConverter))]
internal enum AckPolicyKind { None, All, Explicit }

[JsonConverter(typeof(ReplayPolicyConverter))]
internal enum ReplayPolicy { Instant, Original }

/// <summary>Go's UnmarshalJSON for these enums: the exact names ("undefined" is all), anything else fails as invalid JSON.</summary>
internal sealed class DeliverPolicyConverter : JsonConverter<DeliverPolicy>
{
    public override DeliverPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString() switch
        {
            "all" or "undefined" => DeliverPolicy.All,
            "last" => DeliverPolicy.Last,
            "new" => DeliverPolicy.New,
            "by_start_sequence" => DeliverPolicy.ByStartSequence,
            "by_start_time" => DeliverPolicy.ByStartTime,
            "last_per_subject" => DeliverPolicy.LastPerSubject,
            var other => throw new JsonException($"can not unmarshal \"{other}\""),
        } : throw new JsonException("can not unmarshal deliver policy");

    public override void Write(Utf8JsonWriter writer, DeliverPolicy value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value switch
        {
            DeliverPolicy.Last => "last",
            DeliverPolicy.New => "new",
            DeliverPolicy.ByStartSequence => "by_start_sequence",
            DeliverPolicy.ByStartTime => "by_start_time",
            DeliverPolicy.LastPerSubject => "last_per_subject",
            _ => "all",
        });
}

internal sealed class AckPolicyConverter : JsonConverter<AckPolicyKind>
{
    public override AckPolicyKind Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString() switch
        {
            "none" => AckPolicyKind.None,
            "all" => AckPolicyKind.All,
            "explicit" => AckPolicyKind.Explicit,
            var other => throw new JsonException($"can not unmarshal \"{other}\""),
        } : throw new JsonException("can not unmarshal ack policy");

    public override void Write(Utf8JsonWriter writer, AckPolicyKind value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value switch { AckPolicyKind.All => "all", AckPolicyKind.Explicit => "explicit", _ => "none" });
}

internal sealed class ReplayPolicyConverter : JsonConverter<ReplayPolicy>
{
    public override ReplayPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString() switch
        {
            "instant" => ReplayPolicy.Instant,
            "original" => ReplayPolicy.Original,
            var other => throw new JsonException($"can not unmarshal \"{other}\""),
        } : throw new JsonException("can not unmarshal replay policy");

    public override void Write(Utf8JsonWriter writer, ReplayPolicy value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value == ReplayPolicy.Original ? "original" : "instant");
}
