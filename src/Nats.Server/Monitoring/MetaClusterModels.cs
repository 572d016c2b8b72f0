using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>Go's MetaClusterInfo (/jsz <c>meta_cluster</c>).</summary>
internal sealed class MetaClusterInfo
{
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Name { get; set; }
    [JsonPropertyName("leader"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Leader { get; set; }
    [JsonPropertyName("peer"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Peer { get; set; }
    [JsonPropertyName("replicas"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<PeerInfo>? Replicas { get; set; }
    [JsonPropertyName("cluster_size")] public int Size { get; set; }
}

/// <summary>Go's PeerInfo: a replica as its group's leader sees it (active in nanoseconds since last heard from).</summary>
internal sealed class PeerInfo
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("current")] public bool Current { get; set; }
    [JsonPropertyName("offline"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Offline { get; set; }
    [JsonPropertyName("active")] public long Active { get; set; }
    [JsonPropertyName("lag"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Lag { get; set; }
    [JsonPropertyName("peer")] public string Peer { get; set; } = "";
}
