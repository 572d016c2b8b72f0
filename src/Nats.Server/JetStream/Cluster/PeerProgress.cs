namespace Nats.Server.JetStream.Cluster;

/// <summary>What a leader knows of one follower: how far its log matches (fsynced there) and when it last answered.</summary>
internal sealed class PeerProgress(ulong next, long now)
{
    /// <summary>The next index to send it.</summary>
    public ulong Next { get; set; } = next;

    /// <summary>The highest index it acknowledged, i.e. holds fsynced and matching ours.</summary>
    public ulong Match { get; set; }

    public long LastSeen { get; set; } = now;

    /// <summary>It refused an append (behind or diverged) and gets point-to-point appends until it has everything.</summary>
    public bool CatchingUp { get; set; }

    /// <summary>Until when the last catch-up append is awaited before it is sent again.</summary>
    public long InFlightUntil { get; set; }
}
