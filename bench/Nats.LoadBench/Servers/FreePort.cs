using System.Net;
using System.Net.Sockets;

namespace Nats.LoadBench.Servers;

internal static class FreePort
{
    /// <summary>Asks the kernel for an unused loopback port. The server binds it a moment later;
    /// the small window is acceptable for a benchmark and startup failures are reported clearly.</summary>
    public static int Next()
    {
        using var l = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        l.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)l.LocalEndPoint!).Port;
    }
}
