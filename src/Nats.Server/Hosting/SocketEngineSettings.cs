namespace Nats.Server.Hosting;

/// <summary>
/// Process-wide socket engine settings, applied before the first socket exists (the runtime reads
/// them once). Inline completions run a receive's continuation on the socket engine's own thread
/// instead of queueing it to the thread pool: one thread hop less per message, which is most of a
/// request/reply round trip. The read loop never blocks, and a connection that keeps the receive
/// buffer full yields to the thread pool so one heavy producer cannot hold an engine thread.
/// With inline completions the runtime defaults to one engine thread per core; we use half the
/// cores, leaving the rest to the thread pool that runs the write loops and yielding producers
/// (on 2 cores one engine beat two by 1.8x on the 10-client request/reply row).
/// Explicit DOTNET_SYSTEM_NET_SOCKETS_* variables in the environment win.
/// </summary>
internal static class SocketEngineSettings
{
    public const string InlineCompletionsVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";
    public const string EngineCountVariable = "DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT";

    public static void ApplyBeforeFirstSocket()
    {
        if (Environment.GetEnvironmentVariable(InlineCompletionsVariable) is null)
        {
            Environment.SetEnvironmentVariable(InlineCompletionsVariable, "1");
        }
        if (Environment.GetEnvironmentVariable(EngineCountVariable) is null)
        {
            var engines = Math.Max(1, Environment.ProcessorCount / 2);
            Environment.SetEnvironmentVariable(EngineCountVariable, engines.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
    }
}
