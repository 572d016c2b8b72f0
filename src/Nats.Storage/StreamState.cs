namespace Nats.Storage;

/// <summary>Counts for one filter or subject: how many messages and the first and last sequence.</summary>
internal readonly record struct SimpleState(ulong Msgs, ulong First, ulong Last);

/// <summary>Messages the store had to drop because their bytes were damaged or missing.</summary>
internal sealed record LostStreamData
{
    /// <summary>Sequences known to be lost (capped; see <see cref="Count"/> for the total).</summary>
    public IReadOnlyList<ulong> Sequences { get; init; } = [];

    /// <summary>Records dropped, including ones whose sequence could not be read.</summary>
    public ulong Count { get; init; }

    public ulong Bytes { get; init; }
}

internal sealed record StreamState
{
    public ulong Msgs { get; init; }
    public ulong Bytes { get; init; }
    public ulong FirstSeq { get; init; }
    public DateTime FirstTime { get; init; }
    public ulong LastSeq { get; init; }
    public DateTime LastTime { get; init; }
    public int NumSubjects { get; init; }
    public ulong NumDeleted { get; init; }
    public LostStreamData? Lost { get; init; }
}

/// <summary>The counters of <see cref="StreamState"/> without anything that needs allocation or a scan
/// (Go's FastState): what a consumer or the stream's info reply reads on a hot path.</summary>
internal readonly record struct FastStreamState(
    ulong Msgs, ulong Bytes, ulong FirstSeq, DateTime FirstTime, ulong LastSeq, DateTime LastTime, int NumSubjects, ulong NumDeleted);
