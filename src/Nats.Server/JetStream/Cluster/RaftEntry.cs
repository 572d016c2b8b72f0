namespace Nats.Server.JetStream.Cluster;

/// <summary>Go's raft entry types (raft.go EntryType); the numbers are on the wire.</summary>
internal enum RaftEntryType : byte
{
    Normal = 0,
    OldSnapshot = 1,
    PeerState = 2,
    AddPeer = 3,
    RemovePeer = 4,
    LeaderTransfer = 5,
    Snapshot = 6,
}

/// <summary>One log entry; its index is its position in the log.</summary>
internal readonly record struct RaftEntry(ulong Term, RaftEntryType Type, byte[] Data);

/// <summary>A snapshot of the state machine through <see cref="Index"/> (the last entry it covers) at <see cref="Term"/>.</summary>
internal sealed record RaftSnapshot(ulong Index, ulong Term, byte[] Data);

/// <summary>The persistent term and vote (Go's tav.idx).</summary>
internal readonly record struct RaftHardState(ulong Term, string Vote);
