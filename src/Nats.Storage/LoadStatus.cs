namespace Nats.Storage;

/// <summary>Outcome of a load by sequence: Go's stores distinguish "no such message" (deleted, or below
/// the first sequence) from "past the end" (EOF), and a consumer waits for new messages only on EOF.</summary>
internal enum LoadStatus
{
    Found,

    /// <summary>Go's ErrStoreMsgNotFound: the sequence is at or below the last one but holds no message.</summary>
    NotFound,

    /// <summary>Go's ErrStoreEOF: the sequence is above the last one.</summary>
    Eof,
}
