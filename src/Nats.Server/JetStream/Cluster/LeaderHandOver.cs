namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A group's hand-over before a clean shutdown (Go's stepdownRaftNodes): the leader steps down, naming the most
/// up-to-date follower, and the shutdown waits (bounded) until another member is seen leading, so the transfer has left
/// this server before its routes close and the group is led again at once instead of after an election timeout.
/// </summary>
internal sealed class LeaderHandOver
{
    private TaskCompletionSource? _newLeader;

    /// <summary>Steps down through <paramref name="stepDown"/> and waits for <see cref="OtherLeads"/>; false only when no other
    /// member led within <paramref name="timeout"/> (true also when this member did not lead).</summary>
    public async Task<bool> RunAsync(Func<Task<bool>> stepDown, TimeSpan timeout)
    {
        var newLeader = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref _newLeader, newLeader);
        if (!await stepDown().ConfigureAwait(false))
        {
            return true;
        }
        try
        {
            await newLeader.Task.WaitAsync(timeout).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    /// <summary>Another member leads the group (called from the group's leader change).</summary>
    public void OtherLeads() => Volatile.Read(ref _newLeader)?.TrySetResult();
}
