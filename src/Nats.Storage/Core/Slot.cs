using Nats.Storage.Subjects;

namespace Nats.Storage.Core;

/// <summary>
/// One sequence's entry in a store's index (32 bytes). A null <see cref="Subject"/> means no message
/// (deleted, skipped or lost); the timestamp stays so time lookups can binary-search across gaps. The
/// memory engine's message arrays live beside the slots (<see cref="SlotList.PayloadOf"/>), so the file
/// engine's slots carry no reference it never uses.
/// </summary>
internal struct Slot
{
    public SubjectInfo? Subject;

    public long Timestamp;

    /// <summary>Memory engine: header length. File engine: block id.</summary>
    public int A;

    /// <summary>File engine: record offset inside its block.</summary>
    public int B;

    /// <summary>Bytes this message counts toward the stream's byte total and MaxBytes.</summary>
    public int Size;

    public readonly bool HasMessage => Subject is not null;
}
