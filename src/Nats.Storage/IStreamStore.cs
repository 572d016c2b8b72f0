namespace Nats.Storage;

/// <summary>Called after a message is added (positive deltas) or removed (negative deltas).</summary>
internal delegate void StorageUpdateHandler(long msgsDelta, long bytesDelta, ulong seq, string subject);

/// <summary>
/// The storage contract JetStream streams and consumers are built on; the shape follows the Go server's
/// StreamStore. Filters are NATS subjects that may contain wildcards ("*" one token, "&gt;" the rest);
/// an empty filter or "&gt;" means every subject. Loads return null where Go returns "not found" or
/// EOF, so hot read loops do not pay for exceptions. All members are thread-safe.
/// </summary>
internal interface IStreamStore : IDisposable
{
    StorageType Type { get; }

    /// <summary>Stores a message and returns its sequence, timestamp (unix ns) and durability ticket. A
    /// store call that returned has reached the operating system (file store, write-through), so a
    /// killed process does not lose it; the ticket completes once it also survives power loss
    /// (acknowledge a publish only then).</summary>
    /// <param name="ttl">Per-message time to live in seconds; 0 = none, -1 = never expires, not even under MaxAge (Go 2.11+ "Nats-TTL: never"; Go 2.9 has no per-message TTL).</param>
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

    /// <summary>
    /// A replicated stream's store, every message of which is also in its group's RAFT log, fsynced there before anything
    /// is acknowledged: message appends then join no sync round of the store's own (the log replays what a crash
    /// loses), which spares the disk a second fsync per message; every other change still syncs as before, and
    /// <see cref="WhenDurable"/> starts a round. Turning it off syncs what was left unsynced (the ticket completes then).
    /// </summary>
    DurabilityTicket SetLogBacked(bool on);

    /// <summary>The last sequence (<see cref="State"/>'s, without building the whole state).</summary>
    ulong LastSequence { get; }

    StoredMessage? LoadMsg(ulong seq, StoredMessage? reuse = null);

    /// <summary>Loads <paramref name="seq"/> into <paramref name="into"/>, telling a deleted sequence
    /// (NotFound) from one past the end (Eof) as Go's LoadMsg errors do.</summary>
    LoadStatus TryLoadMsg(ulong seq, StoredMessage into);

    /// <summary>First message with sequence &gt;= <paramref name="start"/> whose subject matches the filter.</summary>
    StoredMessage? LoadNextMsg(string filter, ulong start, StoredMessage? reuse = null);

    /// <summary>Go's LoadNextMsg: null means EOF (nothing matches at or after start). <paramref name="skip"/>
    /// is the found message's sequence, or the last sequence on EOF, so a consumer resumes at skip+1
    /// without re-scanning what it has passed.</summary>
    StoredMessage? LoadNextMsg(string filter, ulong start, StoredMessage? reuse, out ulong skip);

    /// <summary>First message at or after start matching any filter of the set (multi-filter consumers).</summary>
    StoredMessage? LoadNextMsgMulti(SubjectFilterSet filters, ulong start, StoredMessage? reuse, out ulong skip);

    /// <summary>Last message at or before start matching any filter of the set; skip as for load next.</summary>
    StoredMessage? LoadPrevMsgMulti(SubjectFilterSet filters, ulong start, StoredMessage? reuse, out ulong skip);

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

    /// <summary>Messages at or after sseq matching any filter of the set, each counted once.</summary>
    (ulong Total, ulong ValidThrough) NumPendingMulti(ulong sseq, SubjectFilterSet filters, bool lastPerSubject);

    ulong[] AllLastSeqs();

    /// <summary>Sorted last sequences (at or below <paramref name="maxSeq"/>, 0 = the last) of every subject
    /// matching any filter; throws <see cref="StoreError.TooManyResults"/> beyond <paramref name="maxAllowed"/> (0 = no cap).</summary>
    ulong[] MultiLastSeqs(IReadOnlyList<string> filters, ulong maxSeq, int maxAllowed);

    /// <summary>Sequences between first and last that hold no message.</summary>
    ulong[] DeletedSeqs();

    StreamState State();

    /// <summary>The counters only, without allocating (Go's FastState).</summary>
    FastStreamState FastState();

    /// <summary>Applies a new configuration: every limit is enforced at once (lower MaxAge expires now,
    /// lower per-subject limit trims), a storage type that does not match the engine is refused.</summary>
    void UpdateConfig(StoreConfig config);

    /// <summary>Runs due age and TTL expiry now (a timer does it too).</summary>
    void ExpireMessages();

    void RegisterStorageUpdates(StorageUpdateHandler? handler);

    /// <summary>Reports each removal with its reason (see <see cref="RemovalReason"/>), outside the store lock.</summary>
    void RegisterStorageRemovals(StorageRemovalHandler? handler);

    /// <summary>Opens or creates the state store of consumer <paramref name="name"/> (Go's ConsumerStore);
    /// a null config on the file engine takes the persisted one. Stopping the stream stops its consumers.</summary>
    IConsumerStore ConsumerStore(string name, ConsumerStoreConfig? config = null);

    /// <summary>Consumers this stream holds state for (file engine: including ones not opened since a restart).</summary>
    IReadOnlyList<string> ConsumerNames();

    /// <summary>Writes the stream's messages (and, when asked, its consumers) to <paramref name="destination"/>
    /// in the <see cref="StreamSnapshot"/> archive format. Publishing continues meanwhile; the archive holds
    /// the messages up to the last sequence at the start that were still present when copied.</summary>
    SnapshotResult Snapshot(Stream destination, bool includeConsumers);

    void Stop();

    /// <summary>Stops the store and removes everything it stored.</summary>
    void Delete();
}
