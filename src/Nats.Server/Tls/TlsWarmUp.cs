using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Nats.Server.Tls;

/// <summary>
/// One TLS handshake with ourselves over loopback before the client port opens. The first handshake of a process
/// loads the TLS library, the certificate's key and (JIT builds) compiles the whole handshake path, which on a busy
/// machine took longer than the quarter second a client such as nats.c allows for TLS, CONNECT and PONG; Go's first
/// handshake costs no more than its later ones. Done once at start, bounded, and any failure only logged.
/// </summary>
internal static class TlsWarmUp
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(5);

    public static async Task RunAsync(TlsServerContext context, ILogger logger)
    {
        using var timeout = new CancellationTokenSource(Limit);
        try
        {
            using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            using var dialled = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            var accepting = listener.AcceptAsync(timeout.Token).AsTask();
            await dialled.ConnectAsync(listener.LocalEndPoint!, timeout.Token).ConfigureAwait(false);
            using var accepted = await accepting.ConfigureAwait(false);
            await using var server = new SslStream(new NetworkStream(accepted, ownsSocket: false));
            await using var client = new SslStream(new NetworkStream(dialled, ownsSocket: false));
            var serverSide = server.AuthenticateAsServerAsync(context.CreateServerOptions(false, static (_, _, _, _) => true), timeout.Token);
            var clientSide = client.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = static (_, _, _, _) => true,
            }, timeout.Token);
            await Task.WhenAll(serverSide, clientSide).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // Whatever failed here costs the first client its warm start, nothing more.
            logger.LogDebug("TLS warm-up handshake failed: {Error}", e.Message);
        }
    }
}
