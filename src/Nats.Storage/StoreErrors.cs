namespace Nats.Storage;

/// <summary>Failure kinds a store reports; texts match the Go server's store errors so API replies agree.</summary>
internal enum StoreError
{
    Closed,
    MsgNotFound,
    Eof,
    MaxMsgs,
    MaxBytes,
    MaxMsgsPerSubject,
    MsgTooLarge,
    SequenceMismatch,
    InvalidArgument,
    TooManyResults,
    WrongType,
    NoAckPolicy,

    /// <summary>A write or fsync failed earlier; the store refuses new messages until it is reopened.</summary>
    WriteFailed,
}

internal sealed class StoreException : Exception
{
    public StoreException(StoreError error) : base(TextOf(error)) => Error = error;

    public StoreException(StoreError error, string message) : base(message) => Error = error;

    public StoreError Error { get; }

    public static string TextOf(StoreError error) => error switch
    {
        StoreError.Closed => "store is closed",
        StoreError.MsgNotFound => "no message found",
        StoreError.Eof => "stream store EOF",
        StoreError.MaxMsgs => "maximum messages exceeded",
        StoreError.MaxBytes => "maximum bytes exceeded",
        StoreError.MaxMsgsPerSubject => "maximum messages per subject exceeded",
        StoreError.MsgTooLarge => "message too large",
        StoreError.SequenceMismatch => "expected sequence does not match store",
        StoreError.TooManyResults => "too many matching results for request",
        StoreError.WrongType => "wrong storage type",
        StoreError.NoAckPolicy => "ack policy is none",
        StoreError.WriteFailed => "store write failed",
        _ => "invalid argument",
    };
}
