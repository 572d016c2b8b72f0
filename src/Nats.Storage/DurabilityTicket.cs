using System.Runtime.CompilerServices;

namespace Nats.Storage;

/// <summary>
/// Completes when the changes of a store call are on stable storage (fsynced). All calls whose writes
/// fall into one sync round share the round's task, so awaiting a ticket allocates nothing per call;
/// a ticket of a memory store, or of a file store that acknowledges before syncing (Go-style sync
/// interval), is already complete. A failed sync faults the task with the I/O error.
/// </summary>
internal readonly struct DurabilityTicket
{
    private readonly Task? _task;

    internal DurabilityTicket(Task task) => _task = task;

    public static DurabilityTicket Completed => default;

    public bool IsDurable => _task is null || _task.IsCompletedSuccessfully;

    /// <summary>Complete (durable or failed): awaiting will not wait.</summary>
    public bool IsCompleted => _task is null || _task.IsCompleted;

    public Task AsTask() => _task ?? Task.CompletedTask;

    public TaskAwaiter GetAwaiter() => AsTask().GetAwaiter();

    /// <summary>Blocks the calling thread until durable (throws the sync's error if it failed).</summary>
    public void Wait()
    {
        if (_task is not null && !_task.IsCompletedSuccessfully)
        {
            _task.GetAwaiter().GetResult();
        }
    }
}

/// <summary>A stored message's sequence and time, and the ticket that completes when it is durable.</summary>
internal readonly record struct StoreResult(ulong Seq, long Timestamp, DurabilityTicket Durable)
{
    public void Deconstruct(out ulong seq, out long timestamp)
    {
        seq = Seq;
        timestamp = Timestamp;
    }
}
