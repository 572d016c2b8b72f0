using System.Text.Json.Serialization;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Consumers;

internal sealed class SequenceInfo
{
    [JsonPropertyName("consumer_seq")] public ulong Consumer { get; set; }
    [JsonPropertyName("stream_seq")] public ulong Stream { get; set; }
    [JsonPropertyName("last_active")] public GoTime? Last { get; set; }
}

/// <summary>Go's ConsumerInfo fields; the create/info answers embed them after type and error.</summary>
internal sealed class ConsumerInfo
{
    [JsonPropertyName("type")] public string? Type { get; set; }
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("stream_name")] public string Stream { get; set; } = "";
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("created")] public GoTime Created { get; set; } = GoTime.Zero;
    [JsonPropertyName("config")] public ConsumerConfig? Config { get; set; }
    [JsonPropertyName("delivered")] public SequenceInfo Delivered { get; set; } = new();
    [JsonPropertyName("ack_floor")] public SequenceInfo AckFloor { get; set; } = new();
    [JsonPropertyName("num_ack_pending")] public int NumAckPending { get; set; }
    [JsonPropertyName("num_redelivered")] public int NumRedelivered { get; set; }
    [JsonPropertyName("num_waiting")] public int NumWaiting { get; set; }
    [JsonPropertyName("num_pending")] public ulong NumPending { get; set; }
    [JsonPropertyName("cluster")] public StreamClusterInfo? Cluster { get; set; }

    [JsonPropertyName("push_bound")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool PushBound { get; set; }
}

/// <summary>An error answer of consumer create/info: Go prints the embedded *ConsumerInfo as absent.</summary>
internal sealed class ConsumerErrorResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
}

internal sealed class CreateConsumerRequest
{
    [JsonPropertyName("stream_name")] public string? Stream { get; set; }
    [JsonPropertyName("config")] public ConsumerConfig Config { get; set; } = new();
}

internal sealed class ConsumerNamesResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }

    [JsonPropertyName("consumers")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<string>? Consumers { get; set; } = [];
}

internal sealed class ConsumerListResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }

    [JsonPropertyName("consumers")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<ConsumerInfo>? Consumers { get; set; } = [];
}

internal sealed class ConsumerPagedRequest
{
    [JsonPropertyName("offset")] public int Offset { get; set; }
}

/// <summary>Go's JSApiConsumerGetNextRequest.</summary>
internal sealed class NextRequest
{
    [JsonPropertyName("expires")] public long Expires { get; set; }
    [JsonPropertyName("batch")] public int Batch { get; set; }
    [JsonPropertyName("max_bytes")] public int MaxBytes { get; set; }
    [JsonPropertyName("no_wait")] public bool NoWait { get; set; }
    [JsonPropertyName("idle_heartbeat")] public long Heartbeat { get; set; }
}

internal sealed class NakOptions
{
    [JsonPropertyName("delay")] public long Delay { get; set; }
}

/// <summary>What a durable consumer keeps in its store's metadata so a restart recreates it.</summary>
internal sealed class ConsumerMeta
{
    [JsonPropertyName("created")] public GoTime Created { get; set; }
    [JsonPropertyName("config")] public ConsumerConfig Config { get; set; } = new();
}

[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull, PropertyNameCaseInsensitive = true)]
[JsonSerializable(typeof(ConsumerConfig))]
[JsonSerializable(typeof(ConsumerInfo))]
[JsonSerializable(typeof(ConsumerErrorResponse))]
[JsonSerializable(typeof(CreateConsumerRequest))]
[JsonSerializable(typeof(ConsumerNamesResponse))]
[JsonSerializable(typeof(ConsumerListResponse))]
[JsonSerializable(typeof(ConsumerPagedRequest))]
[JsonSerializable(typeof(NextRequest))]
[JsonSerializable(typeof(NakOptions))]
[JsonSerializable(typeof(ConsumerMeta))]
internal sealed partial class ConsumerJsonContext : JsonSerializerContext;

internal static class ConsumerJson
{
    public static readonly ConsumerJsonContext Context = new(new System.Text.Json.JsonSerializerOptions
    {
        Encoder = GoJsonEncoder.Instance,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        PropertyNameCaseInsensitive = true,
    });
}
