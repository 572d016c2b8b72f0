namespace Nats.Server.Transport;

/// <summary>A peer server connection as its subsystem's <see cref="LinkSet{T}"/> runs it.</summary>
internal interface ILiveLink
{
    /// <summary>Both loops, until the link closes.</summary>
    Task RunAsync();

    /// <summary>The periodic check: handshake deadlines, write deadline, PINGs, stale detection.</summary>
    void OnTick(long now);

    void Close(string reason, bool flush = true);
}

/// <summary>
/// The live connections of one server-to-server subsystem (routes, gateways or leaf nodes) and the tasks that run
/// them and their solicitors: add and remove, the 250 ms tick, and the shutdown that closes every link and waits
/// (bounded) for the tasks. Its lock guards only this set; a subsystem's own state stays under its own lock.
/// </summary>
internal sealed class LinkSet<T> where T : class, ILiveLink
{
    private static readonly TimeSpan TickInterval = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan ShutdownWait = TimeSpan.FromSeconds(5);

    private readonly Lock _sync = new();
    private readonly HashSet<T> _all = [];
    private readonly List<Task> _tasks = [];
    private readonly CancellationTokenSource _stop = new();
    private Timer? _tick;

    /// <summary>Cancelled when the subsystem shuts down: listeners and solicitors stop on it.</summary>
    public CancellationToken Stopping => _stop.Token;

    public bool IsStopping => _stop.IsCancellationRequested;

    /// <summary>Every link, past its handshake or not.</summary>
    public T[] All
    {
        get
        {
            lock (_sync)
            {
                return [.. _all];
            }
        }
    }

    public void StartTicking() => _tick = new Timer(_ => Tick(), null, TickInterval, TickInterval);

    /// <summary>Runs <paramref name="link"/>; closed at once when the subsystem is already shutting down.</summary>
    public T Run(T link)
    {
        lock (_sync)
        {
            _all.Add(link);
            _tasks.RemoveAll(t => t.IsCompleted);
            _tasks.Add(Task.Run(link.RunAsync));
        }
        if (IsStopping)
        {
            link.Close("Server Shutdown");
        }
        return link;
    }

    /// <summary>A task the shutdown waits for too (a solicitor's dial loop).</summary>
    public void Track(Task task)
    {
        lock (_sync)
        {
            _tasks.Add(task);
        }
    }

    public void Remove(T link)
    {
        lock (_sync)
        {
            _all.Remove(link);
        }
    }

    private void Tick()
    {
        var now = Environment.TickCount64;
        foreach (var link in All)
        {
            link.OnTick(now);
        }
    }

    /// <summary>Stops the tick, runs <paramref name="stopListener"/>, closes every link and waits up to 5 s for the tasks.</summary>
    public async Task ShutdownAsync(Func<Task> stopListener)
    {
        _stop.Cancel();
        _tick?.Dispose();
        await stopListener().ConfigureAwait(false);
        foreach (var link in All)
        {
            link.Close("Server Shutdown");
        }
        Task[] tasks;
        lock (_sync)
        {
            tasks = [.. _tasks];
        }
        await Task.WhenAny(Task.WhenAll(tasks), Task.Delay(ShutdownWait)).ConfigureAwait(false);
    }
}
