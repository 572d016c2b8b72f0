using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>Go's ClusterInfo of a stream or consumer group: the cluster, the group's leader and, as this member sees them, the other replicas.</summary>
internal static class GroupClusterInfo
{
    public static StreamClusterInfo Build(MetaGroup meta, RaftStatus status, IReadOnlyList<string> peers, bool activeLeader)
    {
        var info = new StreamClusterInfo
        {
            Name = meta.ClusterName,
            Leader = activeLeader ? meta.Server.ServerName : status.Leader is { } leader ? meta.NameOf(leader) : null,
        };
        var replicas = new List<Monitoring.PeerInfo>();
        foreach (var peer in peers)
        {
            if (peer == meta.PeerId)
            {
                continue;
            }
            var name = meta.NameOf(peer);
            var seen = status.Peers.FirstOrDefault(p => p.Peer == peer);
            var lastSeen = seen is null || seen.LastSeenMs < 0 ? 0 : seen.LastSeenMs;
            replicas.Add(new Monitoring.PeerInfo
            {
                Name = name ?? $"Server name unknown at this time (peerID: {peer})",
                Current = seen is not null && seen.Current && lastSeen <= 10_000,
                Offline = name is null,
                Active = lastSeen * 1_000_000,
                Lag = seen?.Lag ?? 0,
                Peer = peer,
            });
        }
        info.Replicas = replicas.Count > 0 ? replicas : null;
        return info;
    }
}
