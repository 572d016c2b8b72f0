namespace Nats.Storage;

/// <summary>Why a message left the store; interest and work-queue retention act differently on an
/// acknowledgement-driven removal and on a limit or expiry.</summary>
internal enum RemovalReason
{
    /// <summary>RemoveMsg (for example an acknowledged work-queue message).</summary>
    Removed,
    Erased,
    MaxMsgs,
    MaxBytes,
    MaxMsgsPerSubject,
    MaxAge,
    /// <summary>The message's own time to live ran out.</summary>
    Ttl,
    /// <summary>Purge, PurgeEx or Compact. A whole-stream purge is reported once, with an empty subject and
    /// the last sequence: every message up to it is gone.</summary>
    Purge,
    Truncate,
    /// <summary>The message's bytes failed verification; it is counted in <see cref="StreamState.Lost"/>.</summary>
    Damaged,
}

/// <summary>Called, after the store's lock is released, for every message the store removed.</summary>
internal delegate void StorageRemovalHandler(ulong seq, string subject, RemovalReason reason);
