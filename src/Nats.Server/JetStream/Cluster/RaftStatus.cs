namespace Nats.Server.JetStream.Cluster;

/// <summary>A copy of a node's state for other threads (monitoring, API answers), refreshed by its runner.</summary>
internal sealed record RaftStatus(RaftRole Role, ulong Term, string? Leader, ulong Commit, ulong Applied, ulong LastIndex,
    int ClusterSize, IReadOnlyList<RaftPeerStatus> Peers)
{
    public static readonly RaftStatus Initial = new(RaftRole.Follower, 0, null, 0, 0, 0, 0, []);
}

/// <summary>A member as its leader sees it (<see cref="LastSeenMs"/> is -1 when not seen, or this node does not lead).</summary>
internal sealed record RaftPeerStatus(string Peer, bool Current, long LastSeenMs, ulong Lag);
