using Nats.Storage.Subjects;

namespace Nats.Storage.Core;

/// <summary>
/// One sequence's entry in a store's index. A null <see cref="Subject"/> means no message (deleted,
/// skipped or lost); the timestamp stays so time lookups can binary-search across gaps.
/// </summary>
internal struct Slot
{
    public SubjectInfo? Subject;

    /// <summary>Memory engine: header followed by data. File engine: null (bytes live in a block).</summary>
    public byte[]? Payload;

    public long Timestamp;

    /// <summary>Memory engine: header length. File engine: block id.</summary>
    public int A;

    /// <summary>File engine: record offset inside its block.</summary>
    public int B;

    /// <summary>Bytes this message counts toward the stream's byte total and MaxBytes.</summary>
    public int Size;

    public readonly bool HasMessage => Subject is not null;
}
