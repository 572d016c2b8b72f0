namespace Nats.Server.Hosting;

/// <summary>
/// Process-wide socket engine settings, applied before the first socket exists (the runtime reads
/// them once). Inline completions run a receive's continuation on the socket engine's own thread
/// instead of queueing it to the thread pool: one thread hop less per message, which is most of a
/// request/reply round trip. The read loop never blocks, and a connection that keeps the receive
/// buffer full yields to the thread pool so one heavy producer cannot hold an engine thread.
/// An explicit DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS in the environment wins.
/// </summary>
public static class SocketEngineSettings
{
    public const string InlineCompletionsVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    public static void ApplyBeforeFirstSocket()
    {
        if (Environment.GetEnvironmentVariable(InlineCompletionsVariable) is null)
        {
            Environment.SetEnvironmentVariable(InlineCompletionsVariable, "1");
        }
    }
}
