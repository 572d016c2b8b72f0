using System.Runtime.InteropServices;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>POSIX signals to a process this test started, by its own pid (never by name: other engineers' servers run too).</summary>
internal static class ProcessSignals
{
    public const int Continue = 18;
    public const int Stop = 19;

    public static void Send(int pid, int signal)
    {
        if (kill(pid, signal) != 0)
        {
            throw new InvalidOperationException($"kill({pid}, {signal}) failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int sig);
}
