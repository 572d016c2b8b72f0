using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Nats.Server.Tls;

namespace Nats.Server.Transport;

/// <summary>How one peer connection (route, gateway, leaf) secures itself: the block's certificates and CA, which side
/// of the handshake it plays, the host it dialled, and whether the other side must show a certificate.</summary>
internal sealed record PeerTls(TlsServerContext Context, bool Solicit, string TargetHost, bool RequireCertificate);

/// <summary>
/// TLS under a server-to-server connection (Go's doTLSHandshake): plain TCP until <see cref="HandshakeAsync"/> runs the
/// client side (the server that dialled) or the server side, then every read and write goes through the SslStream.
/// The link's read loop and write loop are its one reader and one writer, as SslStream allows; a batch is one write.
/// </summary>
internal sealed class PeerTlsTransport : ClientTransport
{
    private readonly Socket _socket;
    private readonly NetworkStream _network;
    private readonly SslStream _ssl;
    private volatile bool _secured;
    private TlsConnectionState? _state;
    private int _aborted;

    public PeerTlsTransport(Socket socket)
    {
        _socket = socket;
        _socket.NoDelay = true;
        _network = new NetworkStream(socket, ownsSocket: false);
        _ssl = new SslStream(_network, leaveInnerStreamOpen: true);
    }

    public override TlsConnectionState? Tls => _state;

    public override EndPoint? RemoteEndPoint => RemoteEndPointOf(_socket);

    /// <summary>Runs the handshake within the block's timeout; null when it succeeded, else Go's error text.</summary>
    public async Task<string?> HandshakeAsync(PeerTls tls)
    {
        string? refused = null;
        bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
        {
            if (tls.Solicit)
            {
                if (tls.Context.Options.Insecure)
                {
                    return true;
                }
                refused = tls.Context.CheckPeerCertificate(certificate, asClient: false);
                if (refused is null && (errors & SslPolicyErrors.RemoteCertificateNameMismatch) != 0)
                {
                    refused = $"x509: certificate is not valid for {tls.TargetHost}";
                }
            }
            else if (tls.RequireCertificate)
            {
                refused = tls.Context.CheckPeerCertificate(certificate, asClient: true);
            }
            return refused is null;
        }
        using var timeout = new CancellationTokenSource(tls.Context.Timeout);
        try
        {
            if (tls.Solicit)
            {
                await _ssl.AuthenticateAsClientAsync(tls.Context.CreateClientOptions(tls.TargetHost, Validate), timeout.Token).ConfigureAwait(false);
            }
            else
            {
                await _ssl.AuthenticateAsServerAsync(tls.Context.CreateServerOptions(tls.RequireCertificate, Validate), timeout.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            return "i/o timeout";
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException or ObjectDisposedException)
        {
            return refused ?? (e.InnerException is { } cause ? $"{e.Message} {cause.Message}" : e.Message);
        }
        var peer = _ssl.RemoteCertificate is { } presented ? presented as X509Certificate2 ?? new X509Certificate2(presented) : null;
        _state = new TlsConnectionState(TlsNames.VersionName(_ssl.SslProtocol), TlsNames.CipherName(_ssl.NegotiatedCipherSuite), peer);
        _secured = true;
        return null;
    }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken) =>
        _secured ? _ssl.ReadAsync(buffer, cancellationToken) : _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);

    public override ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken) =>
        _secured ? WriteSecureAsync(data, cancellationToken) : _socket.SendAsync(data, SocketFlags.None, cancellationToken);

    private async ValueTask<int> WriteSecureAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        await _ssl.WriteAsync(data, cancellationToken).ConfigureAwait(false);
        return data.Length;
    }

    public override void Abort()
    {
        if (Interlocked.Exchange(ref _aborted, 1) == 1)
        {
            return;
        }
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
        _socket.Close();
        _ssl.Dispose();
        _network.Dispose();
    }

    public override void Dispose() => Abort();
}
