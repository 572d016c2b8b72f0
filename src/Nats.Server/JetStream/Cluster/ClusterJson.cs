using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Cluster;

/// <summary>Go's ClientInfo in a cluster entry, reduced to the account it acts for.</summary>
internal sealed class ClientRef
{
    [JsonPropertyName("acc")] public string? Account { get; set; }
}

/// <summary>Go's raftGroup: the group's name, its members' peer ids and the storage kind.</summary>
internal sealed class RaftGroupJson
{
    [JsonPropertyName("name")] public string? Name { get; set; }
    [JsonPropertyName("peers")] public List<string>? Peers { get; set; }
    [JsonPropertyName("store")] public string? Store { get; set; }
}

/// <summary>Go's streamAssignment (assignStream 0, removeStream 2, updateStream 11); the config is kept as JSON.</summary>
internal sealed class StreamAssignmentJson
{
    [JsonPropertyName("client")] public ClientRef? Client { get; set; }
    [JsonPropertyName("stream")] public JsonElement Stream { get; set; }
    [JsonPropertyName("group")] public RaftGroupJson? Group { get; set; }
    [JsonPropertyName("subject")] public string? Subject { get; set; }
    [JsonPropertyName("reply")] public string? Reply { get; set; }
}

/// <summary>Go's consumerAssignment (assignConsumer 1, removeConsumer 3); the config is kept as JSON.</summary>
internal sealed class ConsumerAssignmentJson
{
    [JsonPropertyName("client")] public ClientRef? Client { get; set; }
    [JsonPropertyName("created")] public string? Created { get; set; }
    [JsonPropertyName("name")] public string? Name { get; set; }
    [JsonPropertyName("stream")] public string? Stream { get; set; }
    [JsonPropertyName("consumer")] public JsonElement Consumer { get; set; }
    [JsonPropertyName("group")] public RaftGroupJson? Group { get; set; }
    [JsonPropertyName("subject")] public string? Subject { get; set; }
    [JsonPropertyName("reply")] public string? Reply { get; set; }
}

/// <summary>Go's JSApiStreamPurgeRequest inside a purge entry (every field omitempty).</summary>
internal sealed class PurgeOpRequest
{
    [JsonPropertyName("filter"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Filter { get; set; }
    [JsonPropertyName("seq"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Sequence { get; set; }
    [JsonPropertyName("keep"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Keep { get; set; }
}

/// <summary>Go's streamPurge (purgeStreamOp 5): what the stream's leader proposes to its group for STREAM.PURGE.</summary>
internal sealed class StreamPurgeOp
{
    public const byte Op = 5;

    [JsonPropertyName("client")] public ClientRef? Client { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("last_seq")] public ulong LastSeq { get; set; }
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("reply")] public string Reply { get; set; } = "";
    [JsonPropertyName("request")] public PurgeOpRequest? Request { get; set; }
}

/// <summary>Go's streamMsgDelete (deleteMsgOp 6): what the stream's leader proposes to its group for STREAM.MSG.DELETE.</summary>
internal sealed class StreamMsgDeleteOp
{
    public const byte Op = 6;

    [JsonPropertyName("client")] public ClientRef? Client { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("no_erase"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool NoErase { get; set; }
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("reply")] public string Reply { get; set; } = "";
}

/// <summary>Source-generated (de)serialisers for the meta and stream group entries (JSON after the op byte, as Go).</summary>
[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(StreamAssignmentJson))]
[JsonSerializable(typeof(ConsumerAssignmentJson))]
[JsonSerializable(typeof(StreamPurgeOp))]
[JsonSerializable(typeof(StreamMsgDeleteOp))]
internal sealed partial class ClusterJsonContext : JsonSerializerContext;

/// <summary>The context for cluster entries, escaping as Go's encoder does; entries end with Go's newline.</summary>
internal static class ClusterJson
{
    public static readonly ClusterJsonContext Context = new(new JsonSerializerOptions
    {
        Encoder = Api.GoJsonEncoder.Instance,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    });

    /// <summary>The op byte, the JSON and a newline (Go's json.Encoder).</summary>
    public static byte[] Entry<T>(byte op, T value, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type)
    {
        var json = JsonSerializer.SerializeToUtf8Bytes(value, type);
        var entry = new byte[json.Length + 2];
        entry[0] = op;
        json.CopyTo(entry, 1);
        entry[^1] = (byte)'\n';
        return entry;
    }

    /// <summary>Decodes an entry body; null when malformed (never trusted: it came over the network).</summary>
    public static T? Decode<T>(ReadOnlySpan<byte> json, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type) where T : class
    {
        try
        {
            return JsonSerializer.Deserialize(json, type);
        }
        catch (Exception e) when (e is JsonException or NotSupportedException or InvalidOperationException)
        {
            return null;
        }
    }
}
