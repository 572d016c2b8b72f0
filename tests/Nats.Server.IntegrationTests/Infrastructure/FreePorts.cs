using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// Ports a test names in a configuration before the server that binds them starts (a hub's leaf port its spokes
/// dial, a gateway port, a route port). Taken from below the kernel's ephemeral range: a port the kernel handed out
/// for port 0 is free again once the probe closes, and the next outgoing connection of any process (the suite makes
/// thousands) may take it as its local port before the server binds it, which fails the server's start. Ports
/// outside that range are never handed out implicitly, so only another test could take one: the process-wide
/// sequence keeps this suite's picks distinct, and each is probed bindable before it is returned.
/// </summary>
internal static class FreePorts
{
    private const int Lowest = 10000;
    private static readonly int s_below = EphemeralLow();
    private static int s_next = Lowest + Random.Shared.Next(Math.Max(1, s_below - Lowest));

    public static int Next()
    {
        for (var attempt = 0; attempt < 1000; attempt++)
        {
            var span = s_below - Lowest;
            var port = Lowest + (int)((uint)Interlocked.Increment(ref s_next) % (uint)span);
            if (Bindable(port))
            {
                return port;
            }
        }
        throw new InvalidOperationException($"no bindable port in {Lowest}-{s_below - 1}");
    }

    private static bool Bindable(int port)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(IPAddress.Loopback, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>The first port of Linux's ephemeral range (32768 by default; 49152 elsewhere, where the file is absent).</summary>
    private static int EphemeralLow()
    {
        try
        {
            var range = File.ReadAllText("/proc/sys/net/ipv4/ip_local_port_range").Split((char[])['\t', ' ', '\n'], StringSplitOptions.RemoveEmptyEntries);
            var low = int.Parse(range[0], CultureInfo.InvariantCulture);
            return low > Lowest + 1000 ? low : 32768;
        }
        catch (IOException)
        {
            return 32768;
        }
        catch (UnauthorizedAccessException)
        {
            return 32768;
        }
    }
}
