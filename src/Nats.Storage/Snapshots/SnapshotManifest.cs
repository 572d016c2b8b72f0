using System.Text.Json.Serialization;

namespace Nats.Storage.Snapshots;

/// <summary>The archive's last entry, <c>stream.json</c>: the sequence range a restore must reproduce
/// (gaps and a trailing run of deleted sequences included) and counts to verify against.</summary>
internal sealed record SnapshotManifest
{
    [JsonPropertyName("version")] public int Version { get; init; }
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("first_seq")] public ulong FirstSeq { get; init; }
    [JsonPropertyName("last_seq")] public ulong LastSeq { get; init; }
    [JsonPropertyName("last_ts")] public DateTime LastTime { get; init; }
    [JsonPropertyName("messages")] public ulong Msgs { get; init; }
    [JsonPropertyName("consumers")] public int Consumers { get; init; }
}

[JsonSerializable(typeof(SnapshotManifest))]
internal sealed partial class SnapshotJson : JsonSerializerContext;
