using System.Text.Json.Serialization;
using Nats.Server.JetStream.Configuration;

namespace Nats.Server.JetStream.Api;

// The $JS.API answers as Go's structs marshal them: ApiResponse (type, error) first, then the embedded
// structs' fields in order. Null members are omitted (Go's omitempty on pointers), so an error answer
// carries only what Go's zero values would still print (ApiPaged's numbers, for example).

internal sealed class ApiResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
}

/// <summary>Go's StreamState as the API marshals it (the store's own counters are <see cref="Nats.Storage.StreamState"/>).</summary>
internal sealed class ApiStreamState
{
    [JsonPropertyName("messages")] public ulong Messages { get; set; }
    [JsonPropertyName("bytes")] public ulong Bytes { get; set; }
    [JsonPropertyName("first_seq")] public ulong FirstSeq { get; set; }
    [JsonPropertyName("first_ts")] public GoTime FirstTime { get; set; } = GoTime.Zero;
    [JsonPropertyName("last_seq")] public ulong LastSeq { get; set; }
    [JsonPropertyName("last_ts")] public GoTime LastTime { get; set; } = GoTime.Zero;

    [JsonPropertyName("num_subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int NumSubjects { get; set; }

    [JsonPropertyName("subjects")] public Dictionary<string, ulong>? Subjects { get; set; }

    [JsonPropertyName("num_deleted")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int NumDeleted { get; set; }

    [JsonPropertyName("deleted")] public List<ulong>? Deleted { get; set; }
    [JsonPropertyName("lost")] public LostData? Lost { get; set; }
    [JsonPropertyName("consumer_count")] public int Consumers { get; set; }
}

internal sealed class LostData
{
    [JsonPropertyName("msgs")] public List<ulong>? Msgs { get; set; }
    [JsonPropertyName("bytes")] public ulong Bytes { get; set; }
}

internal sealed class StreamSourceInfo
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("external")] public ExternalStream? External { get; set; }
    [JsonPropertyName("lag")] public ulong Lag { get; set; }
    [JsonPropertyName("active")] public long Active { get; set; }
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
}

/// <summary>StreamInfo's fields; the create/update/info answers embed them.</summary>
internal sealed class StreamInfo
{
    [JsonPropertyName("config")] public StreamConfig Config { get; set; } = new();
    [JsonPropertyName("created")] public GoTime Created { get; set; }
    [JsonPropertyName("state")] public ApiStreamState State { get; set; } = new();
    [JsonPropertyName("domain")] public string? Domain { get; set; }
    [JsonPropertyName("cluster")] public StreamClusterInfo? Cluster { get; set; }
    [JsonPropertyName("mirror")] public StreamSourceInfo? Mirror { get; set; }
    [JsonPropertyName("sources")] public List<StreamSourceInfo>? Sources { get; set; }
}

internal sealed class StreamCreateResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("config")] public StreamConfig? Config { get; set; }
    [JsonPropertyName("created")] public GoTime? Created { get; set; }
    [JsonPropertyName("state")] public ApiStreamState? State { get; set; }
    [JsonPropertyName("domain")] public string? Domain { get; set; }
    [JsonPropertyName("cluster")] public StreamClusterInfo? Cluster { get; set; }
    [JsonPropertyName("mirror")] public StreamSourceInfo? Mirror { get; set; }
    [JsonPropertyName("sources")] public List<StreamSourceInfo>? Sources { get; set; }

    [JsonPropertyName("did_create")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool DidCreate { get; set; }

    public void Fill(StreamInfo info)
    {
        Config = info.Config;
        Created = info.Created;
        State = info.State;
        Domain = info.Domain;
        Cluster = info.Cluster;
        Mirror = info.Mirror;
        Sources = info.Sources;
    }
}

internal sealed class StreamInfoResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("config")] public StreamConfig? Config { get; set; }
    [JsonPropertyName("created")] public GoTime? Created { get; set; }
    [JsonPropertyName("state")] public ApiStreamState? State { get; set; }
    [JsonPropertyName("domain")] public string? Domain { get; set; }
    [JsonPropertyName("cluster")] public StreamClusterInfo? Cluster { get; set; }
    [JsonPropertyName("mirror")] public StreamSourceInfo? Mirror { get; set; }
    [JsonPropertyName("sources")] public List<StreamSourceInfo>? Sources { get; set; }

    public void Fill(StreamInfo info)
    {
        Config = info.Config;
        Created = info.Created;
        State = info.State;
        Domain = info.Domain;
        Cluster = info.Cluster;
        Mirror = info.Mirror;
        Sources = info.Sources;
    }
}

internal sealed class StreamNamesResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }

    /// <summary>Go marshals a nil slice as null here (no omitempty).</summary>
    [JsonPropertyName("streams")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<string>? Streams { get; set; }
}

internal sealed class StreamListResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }

    [JsonPropertyName("streams")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<StreamInfo>? Streams { get; set; }

    [JsonPropertyName("missing")] public List<string>? Missing { get; set; }
}

internal sealed class SuccessResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }

    [JsonPropertyName("success")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Success { get; set; }
}

internal sealed class PurgeResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }

    [JsonPropertyName("success")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Success { get; set; }

    [JsonPropertyName("purged")] public ulong Purged { get; set; }
}

internal sealed class StoredMsg
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("seq")] public ulong Sequence { get; set; }
    [JsonPropertyName("hdrs")] public byte[]? Header { get; set; }
    [JsonPropertyName("data")] public byte[]? Data { get; set; }
    [JsonPropertyName("time")] public GoTime Time { get; set; }
}

internal sealed class MsgGetResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("message")] public StoredMsg? Message { get; set; }
}

internal sealed class ApiStats
{
    [JsonPropertyName("total")] public ulong Total { get; set; }
    [JsonPropertyName("errors")] public ulong Errors { get; set; }

    [JsonPropertyName("inflight")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong Inflight { get; set; }
}

internal sealed class AccountInfoResponse
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("error")] public JsApiError? Error { get; set; }
    [JsonPropertyName("memory")] public ulong? Memory { get; set; }
    [JsonPropertyName("storage")] public ulong? Storage { get; set; }
    [JsonPropertyName("streams")] public int? Streams { get; set; }
    [JsonPropertyName("consumers")] public int? Consumers { get; set; }
    [JsonPropertyName("limits")] public JetStreamAccountLimits? Limits { get; set; }
    [JsonPropertyName("domain")] public string? Domain { get; set; }
    [JsonPropertyName("api")] public ApiStats? Api { get; set; }
}

/// <summary>Request bodies (Go ignores unknown fields and matches names case-insensitively).</summary>
internal sealed class StreamInfoRequest
{
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("deleted_details")] public bool DeletedDetails { get; set; }
    [JsonPropertyName("subjects_filter")] public string? SubjectsFilter { get; set; }
}

internal sealed class StreamNamesRequest
{
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("subject")] public string? Subject { get; set; }
}

internal sealed class PurgeRequest
{
    [JsonPropertyName("seq")] public ulong Sequence { get; set; }
    [JsonPropertyName("filter")] public string? Subject { get; set; }
    [JsonPropertyName("keep")] public ulong Keep { get; set; }
}

internal sealed class MsgDeleteRequest
{
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("no_erase")] public bool NoErase { get; set; }
}

internal sealed class MsgGetRequest
{
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("last_by_subj")] public string? LastFor { get; set; }
    [JsonPropertyName("next_by_subj")] public string? NextFor { get; set; }
}

/// <summary>What <c>meta.inf</c> holds for a stream (Go's FileStreamInfo: created time and config).</summary>
internal sealed class StreamMetaFile
{
    [JsonPropertyName("created")] public GoTime Created { get; set; }
    [JsonPropertyName("config")] public StreamConfig Config { get; set; } = new();
}
