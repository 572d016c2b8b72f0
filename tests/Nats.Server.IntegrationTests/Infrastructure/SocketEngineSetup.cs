using System.Runtime.CompilerServices;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Infrastructure;

internal static class SocketEngineSetup
{
    /// <summary>In-process servers run with the same socket engine settings as the executable.</summary>
    [ModuleInitializer]
    internal static void Apply()
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();

        // This process hosts dozens of servers and their clients at once, and some tests hold pool
        // threads on purpose (cost-15 bcrypt checks take seconds). On 2 cores the pool starts with 2
        // threads and adds about one per half second when starved, which delayed unrelated tests' reads
        // by seconds and tripped their 1-2 s auth timeouts. Enough threads up front removes that stall.
        ThreadPool.GetMinThreads(out var workers, out var io);
        ThreadPool.SetMinThreads(Math.Max(workers, 64), Math.Max(io, 64));
    }
}
