using System.Text.Json.Serialization;
using Nats.Storage;

namespace Nats.Server.JetStream.Api;

/// <summary>Go's StreamConfig (stream.go, 2.9.10): same JSON names, order and omitempty rules.</summary>
internal sealed class StreamConfig
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("description")] public string? Description { get; set; }
    [JsonPropertyName("subjects")] public List<string>? Subjects { get; set; }
    [JsonPropertyName("retention")] public RetentionPolicy Retention { get; set; }
    [JsonPropertyName("max_consumers")] public int MaxConsumers { get; set; }
    [JsonPropertyName("max_msgs")] public long MaxMsgs { get; set; }
    [JsonPropertyName("max_bytes")] public long MaxBytes { get; set; }
    [JsonPropertyName("max_age")] public long MaxAge { get; set; }
    [JsonPropertyName("max_msgs_per_subject")] public long MaxMsgsPerSubject { get; set; }

    [JsonPropertyName("max_msg_size")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxMsgSize { get; set; }

    [JsonPropertyName("discard"), JsonConverter(typeof(DiscardConverter))] public DiscardPolicy Discard { get; set; }
    [JsonPropertyName("storage")] public StorageKind Storage { get; set; }
    [JsonPropertyName("num_replicas")] public int Replicas { get; set; }

    [JsonPropertyName("no_ack")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool NoAck { get; set; }

    [JsonPropertyName("template_owner")] public string? TemplateOwner { get; set; }

    [JsonPropertyName("duplicate_window")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long DuplicateWindow { get; set; }

    [JsonPropertyName("placement")] public Placement? Placement { get; set; }
    [JsonPropertyName("mirror")] public StreamSource? Mirror { get; set; }
    [JsonPropertyName("sources")] public List<StreamSource>? Sources { get; set; }
    [JsonPropertyName("republish")] public RePublish? RePublish { get; set; }
    [JsonPropertyName("allow_direct")] public bool AllowDirect { get; set; }
    [JsonPropertyName("mirror_direct")] public bool MirrorDirect { get; set; }

    [JsonPropertyName("discard_new_per_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool DiscardNewPerSubject { get; set; }

    [JsonPropertyName("sealed")] public bool Sealed { get; set; }
    [JsonPropertyName("deny_delete")] public bool DenyDelete { get; set; }
    [JsonPropertyName("deny_purge")] public bool DenyPurge { get; set; }
    [JsonPropertyName("allow_rollup_hdrs")] public bool AllowRollup { get; set; }

    /// <summary>A deep copy (configs are values in Go).</summary>
    public StreamConfig Clone()
    {
        var copy = (StreamConfig)MemberwiseClone();
        copy.Subjects = Subjects is null ? null : [.. Subjects];
        copy.Placement = Placement is null ? null : new Placement { Cluster = Placement.Cluster, Tags = Placement.Tags is null ? null : [.. Placement.Tags] };
        copy.Mirror = Mirror?.Clone();
        copy.Sources = Sources?.Select(s => s.Clone()).ToList();
        copy.RePublish = RePublish is null ? null : new RePublish { Source = RePublish.Source, Destination = RePublish.Destination, HeadersOnly = RePublish.HeadersOnly };
        return copy;
    }

    /// <summary>Go's reflect.DeepEqual of two configs, through their canonical JSON.</summary>
    public bool SameAs(StreamConfig other) =>
        System.Text.Json.JsonSerializer.Serialize(this, JsJsonContext.Default.StreamConfig)
        == System.Text.Json.JsonSerializer.Serialize(other, JsJsonContext.Default.StreamConfig);
}

internal sealed class Placement
{
    [JsonPropertyName("cluster")] public string? Cluster { get; set; }
    [JsonPropertyName("tags")] public List<string>? Tags { get; set; }
}

internal sealed class RePublish
{
    [JsonPropertyName("src")] public string? Source { get; set; }
    [JsonPropertyName("dest")] public string Destination { get; set; } = "";

    [JsonPropertyName("headers_only")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool HeadersOnly { get; set; }
}

internal sealed class StreamSource
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";

    [JsonPropertyName("opt_start_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong OptStartSeq { get; set; }

    [JsonPropertyName("opt_start_time")] public GoTime? OptStartTime { get; set; }
    [JsonPropertyName("filter_subject")] public string? FilterSubject { get; set; }
    [JsonPropertyName("external")] public ExternalStream? External { get; set; }

    public StreamSource Clone() => new()
    {
        Name = Name,
        OptStartSeq = OptStartSeq,
        OptStartTime = OptStartTime,
        FilterSubject = FilterSubject,
        External = External is null ? null : new ExternalStream { ApiPrefix = External.ApiPrefix, DeliverPrefix = External.DeliverPrefix },
    };
}

internal sealed class ExternalStream
{
    [JsonPropertyName("api")] public string ApiPrefix { get; set; } = "";
    [JsonPropertyName("deliver")] public string DeliverPrefix { get; set; } = "";
}
