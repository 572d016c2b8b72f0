namespace Nats.Server.Delivery;

/// <summary>What kind of peer holds a <see cref="ReceiverKind.Remote"/> interest: the routing rules differ (Go's
/// ROUTER, and LEAF with its isSpoke flag).</summary>
internal enum PeerRole : byte
{
    /// <summary>A route to a server of our own cluster.</summary>
    Route,

    /// <summary>A leaf connection on which this server is the hub (accepted from a spoke).</summary>
    HubLeaf,

    /// <summary>A leaf connection on which this server is the spoke (dialled to a hub, Go's isSpokeLeafNode).</summary>
    SpokeLeaf,

    /// <summary>A gateway connection to another cluster: outbound ones hold the remote cluster's interest.</summary>
    Gateway,
}

/// <summary>
/// A peer server's connection seen from the delivery seam: a route, a leaf or a gateway connection. The interest it
/// announced is subscriptions of kind <see cref="ReceiverKind.Remote"/> whose receiver is this peer; a publish
/// that matches some collects the peer once (<see cref="Routes.RouteTargets"/>) and ends in one
/// <see cref="SendMessage"/>, the only virtual call, once per peer and publish.
/// </summary>
internal abstract class RemotePeer : Receiver
{
    private protected RemotePeer(PeerRole role)
        : base(ReceiverKind.Remote) => Role = role;

    public PeerRole Role { get; private protected set; }

    public bool IsLeaf => Role is PeerRole.HubLeaf or PeerRole.SpokeLeaf;

    /// <summary>The cluster the peer belongs to as it told us (leaf connections), for Go's cluster-wide no echo.</summary>
    public virtual string RemoteCluster => "";

    /// <summary><see cref="RemoteCluster"/> as bytes (compared with a routed LMSG's origin); empty for none.</summary>
    public virtual byte[] RemoteClusterUtf8 => [];

    /// <summary>One message for the peer, written at the end of <paramref name="publisher"/>'s batch.</summary>
    public abstract void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, MessageOrigin publisher);
}
