using System.Net.Sockets;

namespace Nats.Server.Hosting;

/// <summary>
/// A listener (client, monitor, websocket, MQTT) could not bind. The message is the Go server's fatal
/// log line for that listener, e.g. <c>Error listening on port: 0.0.0.0:4222, "listen tcp 0.0.0.0:4222:
/// bind: address already in use"</c>; the executable logs it as [FTL] and exits 1, as Go does.
/// </summary>
public sealed class ListenFailedException(string message, Exception inner) : IOException(message, inner)
{
    /// <summary>Go's net.Listen error text: <c>listen tcp host:port: bind: reason</c>.</summary>
    internal static string ListenError(string host, int port, Exception e)
    {
        var h = string.IsNullOrEmpty(host) ? "0.0.0.0" : host.Trim('[', ']');
        var hostPort = h.Contains(':') ? $"[{h}]:{port}" : $"{h}:{port}";
        return $"listen tcp {hostPort}: {Reason(e)}";
    }

    private static string Reason(Exception e)
    {
        for (Exception? x = e; x is not null; x = x.InnerException)
        {
            if (x is SocketException s)
            {
                return s.SocketErrorCode switch
                {
                    SocketError.AddressAlreadyInUse => "bind: address already in use",
                    SocketError.AccessDenied => "bind: permission denied",
                    SocketError.AddressNotAvailable => "bind: cannot assign requested address",
                    _ => s.Message,
                };
            }
            // Kestrel reports a taken port as its own exception type, with or without the socket error inside.
            if (x.GetType().Name == "AddressInUseException")
            {
                return "bind: address already in use";
            }
        }
        return e.Message;
    }
}
