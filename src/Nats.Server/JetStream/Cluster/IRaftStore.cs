namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A RAFT node's persistent state: term and vote, the latest snapshot, and the log after it. Appends and
/// truncations may stay buffered until <see cref="Sync"/>; the node acknowledges nothing it has not synced.
/// State and snapshot saves are durable when they return.
/// </summary>
internal interface IRaftStore : IDisposable
{
    RaftHardState State { get; }

    /// <summary>Durable on return (a vote must never be forgotten).</summary>
    void SaveState(ulong term, string vote);

    RaftSnapshot? Snapshot { get; }

    /// <summary>
    /// Durable on return. Entries through the snapshot's index are dropped; with <paramref name="keepLog"/>
    /// false (a snapshot installed from the leader that our log does not match) the whole log is dropped.
    /// </summary>
    void SaveSnapshot(RaftSnapshot snapshot, bool keepLog);

    /// <summary>The snapshot's index plus one (1 without a snapshot).</summary>
    ulong FirstIndex { get; }

    /// <summary>The last index held (synced or not); the snapshot's index when the log is empty.</summary>
    ulong LastIndex { get; }

    /// <summary>The term of <paramref name="index"/>: the snapshot's for its index, 0 for index 0.</summary>
    ulong TermAt(ulong index);

    RaftEntry EntryAt(ulong index);

    void Append(in RaftEntry entry);

    /// <summary>Drops every entry after <paramref name="index"/>.</summary>
    void TruncateAfter(ulong index);

    /// <summary>Whether appends or truncations await <see cref="Sync"/> or <see cref="BeginSync"/>.</summary>
    bool Dirty { get; }

    /// <summary>Makes every append and truncation durable (fsync) before it returns.</summary>
    void Sync();

    /// <summary>
    /// Starts making every append and truncation so far durable without waiting for it (group commit: one round covers
    /// all requests made before it began); <see cref="DurableIndex"/> advances when it is done. A store without
    /// background syncs does it before returning.
    /// </summary>
    void BeginSync();

    /// <summary>Every entry through this index is durable (never above <see cref="LastIndex"/>).</summary>
    ulong DurableIndex { get; }
}
