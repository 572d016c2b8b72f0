namespace Nats.Storage.Subjects;

/// <summary>
/// Per-subject totals kept by both engines. Message slots point at this object, so a slot's subject costs
/// one reference, identity comparison replaces string comparison, and the string is never re-created.
/// </summary>
internal sealed class SubjectInfo(string subject)
{
    public readonly string Subject = subject;
    public ulong First;
    public ulong Last;
    public ulong Count;

    /// <summary>The first sequence may be stale (below the real one) after its message was removed;
    /// it is repaired on demand by scanning forward, which keeps removals O(1).</summary>
    public bool FirstStale;

    /// <summary>Likewise the last sequence may be above the real one; repaired by scanning backward.</summary>
    public bool LastStale;

    // Memo of "does this subject match the store's current wildcard filter", valid while MatchEpoch
    // equals the store's epoch; turns a linear scan's per-message tokenised match into a field compare.
    public int MatchEpoch;
    public bool MatchResult;

    /// <summary>Marks subjects that straddle a filtered-state start sequence during one query.</summary>
    public int StraddleMark;

    /// <summary>Marks subjects already counted during one multi-filter query.</summary>
    public int VisitMark;

    internal TrieNode? Node;
}
