namespace Nats.Server.JetStream.Cluster;

/// <summary>The kinds of RAFT message; over NATS each has its $NRG subject (see <c>NrgTransport</c>).</summary>
internal enum RaftMessageKind : byte
{
    VoteRequest,
    VoteResponse,
    AppendEntry,
    AppendEntryResponse,
}

/// <summary>
/// How a node reaches its group. Delivery may lose, delay, duplicate or reorder messages; the node copes.
/// Called on the node's own thread only.
/// </summary>
internal interface IRaftTransport
{
    /// <summary>To every other member (vote requests, appends and heartbeats).</summary>
    void Broadcast(RaftMessageKind kind, byte[] payload);

    /// <summary>To one member (responses, and catch-up appends for a lagging peer).</summary>
    void Send(string peer, RaftMessageKind kind, byte[] payload);
}

/// <summary>What the group replicates into. Called on the node's thread, in log order.</summary>
internal interface IRaftStateMachine
{
    /// <summary>A committed <see cref="RaftEntryType.Normal"/> entry.</summary>
    void Apply(ulong index, byte[] data);

    /// <summary>The state through the last applied entry, for a snapshot.</summary>
    byte[] CreateSnapshot();

    /// <summary>Replaces the state with a snapshot's (at start, or installed from the leader).</summary>
    void Restore(byte[] data);

    /// <summary>Leadership changed (leader is null while none is known).</summary>
    void LeaderChanged(string? leader, ulong term);

    /// <summary>Whether <see cref="CreateSnapshot"/> would describe every applied entry now (a stream replica still copying
    /// messages from its leader would not: the log it drops would be all that names them).</summary>
    bool CanSnapshot => true;

    /// <summary>Whether committed entries may be applied now (false while a stream replica copies the messages its snapshot
    /// names from the leader: the entries after the snapshot wait, and the node keeps voting and appending meanwhile).</summary>
    bool CanApply => true;

    /// <summary>The end of a batch of applied entries (answers collected while applying go out together).</summary>
    void AfterApply()
    {
    }
}
