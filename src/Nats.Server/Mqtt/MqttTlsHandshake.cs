using System.Net.Security;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Tls;

namespace Nats.Server.Mqtt;

internal static class MqttTlsHandshake
{
    /// <summary>Go requires TLS first on an MQTT port with tls {}: the handshake within the block's timeout, then MQTT inside it.</summary>
    public static async Task<Stream?> HandshakeAsync(Stream stream, TlsServerContext tls, ILogger logger, MqttConnection connection)
    {
        var ssl = new SslStream(stream, leaveInnerStreamOpen: false);
        var verifier = new ClientCertificateVerifier(tls);
        using var timeout = new CancellationTokenSource(tls.Timeout);
        try
        {
            await ssl.AuthenticateAsServerAsync(tls.CreateServerOptions(verifier), timeout.Token).ConfigureAwait(false);
            return ssl;
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException or OperationCanceledException or SocketException)
        {
            if (timeout.IsCancellationRequested)
            {
                logger.LogError("{Connection} - TLS handshake timeout", connection);
            }
            else
            {
                logger.LogError("{Connection} - TLS handshake error: {Error}", connection, verifier.FailureReason ?? e.Message);
            }
            await ssl.DisposeAsync().ConfigureAwait(false);
            return null;
        }
    }
}
