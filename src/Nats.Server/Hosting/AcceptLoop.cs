using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Nats.Server.Hosting;

/// <summary>
/// The accept loop every client listener runs (the NATS client port and the MQTT port): each accepted
/// socket goes to the admit callback, which wraps it in its transport and hands it to
/// <see cref="ClientAdmission"/>. A failed accept is logged with Go's text and retried; closing the
/// listener ends the loop.
/// </summary>
internal static class AcceptLoop
{
    public static async Task RunAsync(Socket listener, Action<Socket> admit, Func<bool> stopping, ILogger logger, CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
                break;
            }
            catch (SocketException e)
            {
                if (cancellationToken.IsCancellationRequested || stopping())
                {
                    break;
                }
                logger.LogError("Temporary accept error: {Error}", e.Message);
                await Task.Delay(10, CancellationToken.None).ConfigureAwait(false);
                continue;
            }
            admit(socket);
        }
    }
}
