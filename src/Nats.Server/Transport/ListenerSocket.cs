using System.Net.Sockets;

namespace Nats.Server.Transport;

/// <summary>
/// Socket options every listener shares. Go's listeners set SO_REUSEADDR, so a restarted server gets its port
/// back while the killed one's connections sit in TIME_WAIT, yet a second server on a port someone listens
/// on fails. .NET's <see cref="SocketOptionName.ReuseAddress"/> cannot give that on Linux: it sets
/// SO_REUSEPORT as well, which let a second server bind the same port and take half its connections.
/// </summary>
internal static class ListenerSocket
{
    // <sys/socket.h> on Linux: SOL_SOCKET 1, SO_REUSEADDR 2.
    private const int LinuxSolSocket = 1;
    private const int LinuxSoReuseAddr = 2;

    public static void AllowRebindOverTimeWait(Socket socket)
    {
        if (OperatingSystem.IsLinux())
        {
            socket.SetRawSocketOption(LinuxSolSocket, LinuxSoReuseAddr, BitConverter.GetBytes(1));
        }
    }
}
