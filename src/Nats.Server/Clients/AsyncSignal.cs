using System.Threading.Tasks.Sources;

namespace Nats.Server.Clients;

/// <summary>
/// An auto-reset wake-up for exactly one waiter (the write loop). Set() before Wait() is remembered,
/// repeated Set()s coalesce into one wake-up, and nothing is allocated per signal: the waiter is
/// resumed by queueing this object itself as a thread-pool work item, so the signalling thread (a
/// publisher's read loop) never runs the writer's continuation inline.
/// </summary>
internal sealed class AsyncSignal : IValueTaskSource, IThreadPoolWorkItem
{
    private const int Idle = 0;
    private const int Signaled = 1;
    private const int Waiting = 2;

    private ManualResetValueTaskSourceCore<bool> _core = new() { RunContinuationsAsynchronously = false };
    private int _state;

    /// <summary>Wakes the waiter, or makes the next wait return at once.</summary>
    public void Set()
    {
        while (true)
        {
            var state = Volatile.Read(ref _state);
            if (state == Signaled)
            {
                return;
            }
            if (state == Idle)
            {
                if (Interlocked.CompareExchange(ref _state, Signaled, Idle) == Idle)
                {
                    return;
                }
                continue;
            }
            if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
            {
                ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
                return;
            }
        }
    }

    public ValueTask WaitAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Idle, Signaled) == Signaled)
        {
            return ValueTask.CompletedTask;
        }
        _core.Reset();
        if (Interlocked.CompareExchange(ref _state, Waiting, Idle) != Idle)
        {
            // Set() raced in between: consume it.
            Volatile.Write(ref _state, Idle);
            return ValueTask.CompletedTask;
        }
        return new ValueTask(this, _core.Version);
    }

    void IThreadPoolWorkItem.Execute() => _core.SetResult(true);

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
