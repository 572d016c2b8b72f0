namespace Nats.Storage;

/// <summary>Called after a message is added (positive deltas) or removed (negative deltas).</summary>
public delegate void StorageUpdateHandler(long msgsDelta, long bytesDelta, ulong seq, string subject);

/// <summary>
/// The storage contract JetStream streams and consumers are built on; the shape follows the Go server's
/// StreamStore. Filters are NATS subjects that may contain wildcards ("*" one token, "&gt;" the rest);
/// an empty filter or "&gt;" means every subject. Loads return null where Go returns "not found" or
/// EOF, so hot read loops do not pay for exceptions. All members are thread-safe.
/// </summary>
public interface IStreamStore : IDisposable
{
    StorageType Type { get; }

    /// <summary>Stores a message and returns its sequence, timestamp (unix ns) and durability ticket. A
    /// store call that returned has reached the operating system (file store, write-through), so a
    /// killed process does not lose it; the ticket completes once it also survives power loss
    /// (acknowledge a publish only then).</summary>
    /// <param name="ttl">Per-message time to live in seconds; 0 = none, -1 = never expires even under MaxAge.</param>
    StoreResult StoreMsg(string subject, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data, long ttl = 0);

    /// <summary>Stores a message with a sequence and time decided elsewhere (replication, sourcing).</summary>
    DurabilityTicket StoreRawMsg(string subject, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data, ulong seq, long timestamp, long ttl = 0);

    /// <summary>Consumes the next sequence without a message.</summary>
    ulong SkipMsg();

    /// <summary>Consumes <paramref name="num"/> sequences starting at <paramref name="seq"/>, which must be last+1.</summary>
    void SkipMsgs(ulong seq, ulong num);

    /// <summary>Writes anything buffered to the operating system (and to disk when sync-always is set).</summary>
    void FlushAllPending();

    /// <summary>A ticket that completes once every change made by calls that already returned is on
    /// stable storage (removals, purges, skips: acknowledge them after it). In the file store's interval
    /// mode this starts a sync round now.</summary>
    DurabilityTicket WhenDurable();

    StoredMessage? LoadMsg(ulong seq, StoredMessage? reuse = null);

    /// <summary>First message with sequence &gt;= <paramref name="start"/> whose subject matches the filter.</summary>
    StoredMessage? LoadNextMsg(string filter, ulong start, StoredMessage? reuse = null);

    /// <summary>Last message with sequence &lt;= <paramref name="start"/> whose subject matches the filter.</summary>
    StoredMessage? LoadPrevMsg(string filter, ulong start, StoredMessage? reuse = null);

    /// <summary>Newest message on a subject (or on any subject matching a wildcard).</summary>
    StoredMessage? LoadLastMsg(string subject, StoredMessage? reuse = null);

    string? SubjectForSeq(ulong seq);

    bool RemoveMsg(ulong seq);

    /// <summary>Removes a message and overwrites its bytes wherever they are stored.</summary>
    bool EraseMsg(ulong seq);

    ulong Purge();

    /// <summary>Purges messages matching <paramref name="subject"/>: below <paramref name="seq"/> when it is
    /// above 1, and leaving the newest <paramref name="keep"/> when it is above 0 (Go's PurgeEx).</summary>
    ulong PurgeEx(string subject, ulong seq, ulong keep);

    /// <summary>Removes every message below <paramref name="seq"/>.</summary>
    ulong Compact(ulong seq);

    /// <summary>Removes every message above <paramref name="seq"/>; the last sequence becomes <paramref name="seq"/>.</summary>
    void Truncate(ulong seq);

    /// <summary>First sequence stored at or after the time, or last+1 when none.</summary>
    ulong GetSeqFromTime(DateTime time);

    SimpleState FilteredState(ulong seq, string filter);

    Dictionary<string, SimpleState> SubjectsState(string filter);

    Dictionary<string, ulong> SubjectsTotals(string filter);

    /// <summary>Messages at or after <paramref name="sseq"/> matching the filter (one per subject when
    /// <paramref name="lastPerSubject"/>); validThrough is the last sequence the answer covers.</summary>
    (ulong Total, ulong ValidThrough) NumPending(ulong sseq, string filter, bool lastPerSubject);

    ulong[] AllLastSeqs();

    /// <summary>Sequences between first and last that hold no message.</summary>
    ulong[] DeletedSeqs();

    StreamState State();

    void UpdateConfig(StoreConfig config);

    /// <summary>Runs due age and TTL expiry now (a timer does it too).</summary>
    void ExpireMessages();

    void RegisterStorageUpdates(StorageUpdateHandler? handler);

    void Stop();

    /// <summary>Stops the store and removes everything it stored.</summary>
    void Delete();
}
