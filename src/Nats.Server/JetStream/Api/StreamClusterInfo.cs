using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Api;

/// <summary>Go's ClusterInfo in a replicated stream's info: the cluster, the group's leader and the other replicas as it sees them.</summary>
internal sealed class StreamClusterInfo
{
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Name { get; set; }
    [JsonPropertyName("leader"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Leader { get; set; }
    [JsonPropertyName("replicas"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<Monitoring.PeerInfo>? Replicas { get; set; }
}
