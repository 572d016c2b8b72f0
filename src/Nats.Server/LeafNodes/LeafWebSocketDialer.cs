using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;
using Nats.Server.Transport;

namespace Nats.Server.LeafNodes;

/// <summary>
/// The dialling side of a leaf over WebSocket (Go's leafNodeSolicitWSConnection): TCP, TLS for wss:// (or a remote with
/// <c>tls {}</c>, or a hub known to require it), then the HTTP upgrade on Go's <c>/leafnode</c> path. The SDK's client
/// WebSocket masks every frame, which is what Go's hub expects of a leaf by default.
/// </summary>
internal static class LeafWebSocketDialer
{
    private const string LeafPath = "/leafnode";

    /// <summary>The upgraded connection, or the dial error (TcpFailed when TCP itself failed: Go's dial line).</summary>
    public static async Task<(WebSocketTransport? Transport, IPEndPoint? Remote, string? Error, bool TcpFailed)> ConnectAsync(
        LeafSolicitor solicitor, Uri url, TimeSpan timeout, Action<string> log, CancellationToken stop)
    {
        IPEndPoint? remote = null;
        string? tcpError = null;
        string? tlsRefusal = null;
        var tls = solicitor.TlsFor(url);
        var handler = new SocketsHttpHandler
        {
            UseProxy = false,
            ConnectTimeout = timeout,
            ConnectCallback = async (context, cancellationToken) =>
            {
                var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    await socket.ConnectAsync(context.DnsEndPoint, cancellationToken).ConfigureAwait(false);
                }
                catch (Exception e) when (e is SocketException or OperationCanceledException)
                {
                    socket.Dispose();
                    tcpError = e is SocketException { SocketErrorCode: SocketError.ConnectionRefused }
                        ? $"dial tcp {url.Host}:{url.Port}: connect: connection refused"
                        : $"dial tcp {url.Host}:{url.Port}: i/o timeout";
                    throw;
                }
                remote = socket.RemoteEndPoint as IPEndPoint;
                return new NetworkStream(socket, ownsSocket: true);
            },
        };
        if (tls is not null)
        {
            handler.SslOptions = tls.Context.CreateClientOptions(tls.TargetHost, (_, certificate, _, errors) =>
            {
                tlsRefusal = CheckHub(tls, certificate, errors);
                return tlsRefusal is null;
            });
        }
        var invoker = new HttpMessageInvoker(handler);
        var socket = new ClientWebSocket();
        // Go does not ping at the WebSocket level; NATS PING/PONG covers liveness.
        socket.Options.KeepAliveInterval = TimeSpan.Zero;
        var path = LeafPath + url.AbsolutePath.TrimStart('/');
        var target = new UriBuilder(url) { Scheme = tls is null ? "ws" : "wss", Path = path, UserName = "", Password = "" }.Uri;
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stop);
        deadline.CancelAfter(timeout + (tls?.Context.Timeout ?? TimeSpan.Zero));
        try
        {
            await socket.ConnectAsync(target, invoker, deadline.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is WebSocketException or HttpRequestException or OperationCanceledException or IOException)
        {
            socket.Dispose();
            invoker.Dispose();
            stop.ThrowIfCancellationRequested();
            if (tcpError is not null)
            {
                return (null, null, tcpError, true);
            }
            if (tlsRefusal is not null)
            {
                // Go's doTLSHandshake logs the refusal; the upgrade then fails with "connection closed".
                log($"TLS leafnode handshake error: {tlsRefusal}");
                return (null, remote, "connection closed", false);
            }
            return (null, remote, e is OperationCanceledException ? "i/o timeout" : "invalid websocket connection", false);
        }
        var transport = new WebSocketTransport(socket, remote);
        _ = CloseWhenDoneAsync(transport, socket, invoker);
        return (transport, remote, null, false);
    }

    private static string? CheckHub(PeerTls tls, X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (tls.Context.Options.Insecure)
        {
            return null;
        }
        var refused = tls.Context.CheckPeerCertificate(certificate, asClient: false);
        if (refused is null && (errors & SslPolicyErrors.RemoteCertificateNameMismatch) != 0)
        {
            refused = $"x509: certificate is not valid for {tls.TargetHost}";
        }
        return refused;
    }

    /// <summary>The link's close aborts the transport: say goodbye with a close frame (bounded), then drop the socket.</summary>
    private static async Task CloseWhenDoneAsync(WebSocketTransport transport, ClientWebSocket socket, HttpMessageInvoker invoker)
    {
        await transport.Closed.ConfigureAwait(false);
        if (socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
            try
            {
                await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", timeout.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is WebSocketException or OperationCanceledException or IOException or ObjectDisposedException or InvalidOperationException)
            {
            }
        }
        socket.Abort();
        socket.Dispose();
        invoker.Dispose();
    }
}
