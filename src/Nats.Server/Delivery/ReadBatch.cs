namespace Nats.Server.Delivery;

/// <summary>Work a receiver postpones to the end of the current read batch (see <see cref="ReadBatch"/>).</summary>
internal interface IReadBatchListener
{
    /// <summary>Called once per batch it registered for, on the reading thread.</summary>
    void OnReadBatchEnd();
}

/// <summary>
/// The span of one client read loop pass over its buffer (every command parsed from one socket read),
/// on the reading thread. A receiver that answers each message (JetStream's PubAcks) can collect its
/// answers while a batch is open and send them together when it closes: one publish lock and one write
/// per receiving client for the batch instead of one per message. Outside a batch (timers, internal
/// publishers) <see cref="IsOpen"/> is false and answers go out at once.
/// </summary>
internal static class ReadBatch
{
    [ThreadStatic]
    private static int t_depth;

    [ThreadStatic]
    private static List<IReadBatchListener>? t_listeners;

    public static bool IsOpen => t_depth > 0;

    public static Scope Open()
    {
        t_depth++;
        return default;
    }

    /// <summary>Runs <paramref name="listener"/> when the open batch closes; the caller registers once per batch.</summary>
    public static void AtEnd(IReadBatchListener listener) => (t_listeners ??= []).Add(listener);

    public readonly ref struct Scope
    {
        public void Dispose()
        {
            if (t_depth > 1)
            {
                t_depth--;
                return;
            }
            var listeners = t_listeners;
            try
            {
                // Closed before the listeners run: what they publish is not deferred again.
                t_depth = 0;
                if (listeners is null)
                {
                    return;
                }
                Exception? first = null;
                for (var i = 0; i < listeners.Count; i++)
                {
                    // Every listener runs even if one fails: each owes answers to clients.
                    try
                    {
                        listeners[i].OnReadBatchEnd();
                    }
                    catch (Exception e)
                    {
                        first ??= e;
                    }
                }
                if (first is not null)
                {
                    System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(first);
                }
            }
            finally
            {
                listeners?.Clear();
            }
        }
    }
}
