using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Nats.Server.Tls;

namespace Nats.Server.Transport;

/// <summary>How one peer connection (route, gateway, leaf) secures itself: the block's certificates and CA, which side
/// of the handshake it plays, the host it dialled, whether the other side must show a certificate, and the
/// <c>pinned_certs</c> its certificate must be in once the handshake is done (Go takes them from the cluster, gateway or
/// leafnodes block, never from a gateway's or leaf remote's own <c>tls {}</c>).</summary>
internal sealed record PeerTls(TlsServerContext Context, bool Solicit, string TargetHost, bool RequireCertificate, IReadOnlySet<string>? Pinned);

/// <summary>
/// TLS under a server-to-server connection (Go's doTLSHandshake): plain TCP until <see cref="HandshakeAsync"/> runs the
/// client side (the server that dialled) or the server side, then every read and write goes through the SslStream.
/// Routes and gateways secure the socket before anything is said; a leaf connection only after the hub's plain INFO,
/// so until then this is plain TCP with the non-blocking inline send. The link's read loop and write loop are its one
/// reader and one writer, as SslStream allows; a batch is one write.
/// </summary>
internal sealed class PeerTlsTransport : ClientTransport
{
    private readonly Socket _socket;
    private NetworkStream? _network;
    private SslStream? _ssl;
    private volatile bool _secured;
    private TlsConnectionState? _state;
    private int _aborted;

    public PeerTlsTransport(Socket socket)
    {
        _socket = socket;
        _socket.NoDelay = true;
        // As SocketTransport while plain: inline sends return WouldBlock instead of stalling.
        _socket.Blocking = false;
    }

    public override TlsConnectionState? Tls => _state;

    public override EndPoint? RemoteEndPoint => RemoteEndPointOf(_socket);

    public override bool CanSendNow => !_secured;

    public override int TrySendNow(ReadOnlySpan<byte> data)
    {
        if (_secured)
        {
            return 0;
        }
        var sent = _socket.Send(data, SocketFlags.None, out var error);
        return error switch
        {
            SocketError.Success => sent,
            SocketError.WouldBlock => Math.Max(sent, 0),
            _ => -1,
        };
    }

    /// <summary>Runs the handshake within the block's timeout; null when it succeeded, else Go's error text.</summary>
    public async Task<string?> HandshakeAsync(PeerTls tls)
    {
        // NetworkStream needs a blocking socket; nothing is being sent while the handshake starts.
        _socket.Blocking = true;
        _network = new NetworkStream(_socket, ownsSocket: false);
        var ssl = _ssl = new SslStream(_network, leaveInnerStreamOpen: true);
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
            if (!tls.Solicit && await CheckFirstRecordAsync(timeout.Token).ConfigureAwait(false) is { } notTls)
            {
                return notTls;
            }
            if (tls.Solicit)
            {
                await ssl.AuthenticateAsClientAsync(tls.Context.CreateClientOptions(tls.TargetHost, Validate), timeout.Token).ConfigureAwait(false);
            }
            else
            {
                await ssl.AuthenticateAsServerAsync(tls.Context.CreateServerOptions(tls.RequireCertificate, Validate), timeout.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            return "i/o timeout";
        }
        catch (Exception e) when (e is IOException or SocketException or System.Security.Authentication.AuthenticationException or ObjectDisposedException)
        {
            return refused ?? (e.InnerException is { } cause ? $"{e.Message} {cause.Message}" : e.Message);
        }
        var peer = ssl.RemoteCertificate is { } presented ? presented as X509Certificate2 ?? new X509Certificate2(presented) : null;
        _state = new TlsConnectionState(TlsNames.VersionName(ssl.SslProtocol), TlsNames.CipherName(ssl.NegotiatedCipherSuite), peer);
        _secured = true;
        return null;
    }

    /// <summary>Go's record-layer check, as for clients: a peer speaking plain text gets Go's error rather than SslStream's.</summary>
    private async Task<string?> CheckFirstRecordAsync(CancellationToken cancellationToken)
    {
        var header = new byte[3];
        var peeked = await _socket.ReceiveAsync(header, SocketFlags.Peek, cancellationToken).ConfigureAwait(false);
        if (peeked == 0)
        {
            return "EOF";
        }
        var looksLikeTls = header[0] is 0x16 or 0x15 && (peeked < 3 || ((header[1] << 8) | header[2]) < 0x1000);
        return looksLikeTls ? null : "tls: first record does not look like a TLS handshake";
    }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken) =>
        _secured ? _ssl!.ReadAsync(buffer, cancellationToken) : _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);

    public override ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken) =>
        _secured ? WriteSecureAsync(data, cancellationToken) : _socket.SendAsync(data, SocketFlags.None, cancellationToken);

    private async ValueTask<int> WriteSecureAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        await _ssl!.WriteAsync(data, cancellationToken).ConfigureAwait(false);
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
        _ssl?.Dispose();
        _network?.Dispose();
    }

    public override void Dispose() => Abort();
}
