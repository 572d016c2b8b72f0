using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// A protocol-text client that does what a NATS client does on a TLS port: read the plain INFO, then
/// upgrade the same socket with SslStream (trusting only the test CA), optionally with a client certificate.
/// </summary>
internal sealed class TlsRawClient : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    private readonly Socket _socket;
    private readonly NetworkStream _network;
    private Stream _stream;
    private readonly StringBuilder _pending = new();
    private readonly byte[] _buffer = new byte[64 * 1024];

    private TlsRawClient(Socket socket)
    {
        _socket = socket;
        _network = new NetworkStream(socket, ownsSocket: true);
        _stream = _network;
    }

    public string Info { get; private set; } = "";

    public static async Task<TlsRawClient> ConnectPlainAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        return new TlsRawClient(socket);
    }

    /// <summary>Reads INFO in plain text and upgrades; throws when the handshake fails.</summary>
    public static async Task<TlsRawClient> ConnectAsync(int port, X509Certificate2 ca, X509Certificate2? clientCert = null, bool handshakeFirst = false)
    {
        var client = await ConnectPlainAsync(port);
        try
        {
            if (!handshakeFirst)
            {
                client.Info = await client.ReadUntilAsync("\r\n");
            }
            await client.UpgradeAsync(ca, clientCert);
            if (handshakeFirst)
            {
                client.Info = await client.ReadUntilAsync("\r\n");
            }
            return client;
        }
        catch
        {
            await client.DisposeAsync();
            throw;
        }
    }

    public async Task UpgradeAsync(X509Certificate2 ca, X509Certificate2? clientCert)
    {
        var ssl = new SslStream(_network, leaveInnerStreamOpen: true);
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ClientCertificates = clientCert is null ? null : [clientCert],
            CertificateChainPolicy = new X509ChainPolicy
            {
                TrustMode = X509ChainTrustMode.CustomRootTrust,
                CustomTrustStore = { ca },
                RevocationMode = X509RevocationMode.NoCheck,
            },
        };
        using var cts = new CancellationTokenSource(Timeout);
        await ssl.AuthenticateAsClientAsync(options, cts.Token);
        _stream = ssl;
    }

    public SslStream? Ssl => _stream as SslStream;

    public async Task SendAsync(string text)
    {
        await _stream.WriteAsync(Encoding.UTF8.GetBytes(text));
        await _stream.FlushAsync();
    }

    public async Task SendRawAsync(byte[] data) => await _network.WriteAsync(data);

    public async Task<string> ReadUntilAsync(string marker)
    {
        using var cts = new CancellationTokenSource(Timeout);
        while (true)
        {
            var text = _pending.ToString();
            var index = text.IndexOf(marker, StringComparison.Ordinal);
            if (index >= 0)
            {
                _pending.Remove(0, index + marker.Length);
                return text[..(index + marker.Length)];
            }
            var read = await _stream.ReadAsync(_buffer, cts.Token);
            if (read == 0)
            {
                throw new IOException($"connection closed before '{marker.Trim()}'; got: {text}");
            }
            _pending.Append(Encoding.UTF8.GetString(_buffer, 0, read));
        }
    }

    /// <summary>What arrives until the server closes or <paramref name="quiet"/> passes without a byte.</summary>
    public async Task<string> ReadToCloseOrTimeoutAsync(TimeSpan quiet)
    {
        var all = new StringBuilder(_pending.ToString());
        _pending.Clear();
        try
        {
            while (true)
            {
                using var cts = new CancellationTokenSource(quiet);
                var read = await _stream.ReadAsync(_buffer, cts.Token);
                if (read == 0)
                {
                    return all.ToString();
                }
                all.Append(Encoding.UTF8.GetString(_buffer, 0, read));
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException)
        {
            return all.ToString();
        }
    }

    /// <summary>Reads until the server closes; returns what arrived (raw, without TLS).</summary>
    public async Task<string> ReadToCloseAsync()
    {
        using var cts = new CancellationTokenSource(Timeout);
        var all = new StringBuilder(_pending.ToString());
        try
        {
            while (true)
            {
                var read = await _stream.ReadAsync(_buffer, cts.Token);
                if (read == 0)
                {
                    return all.ToString();
                }
                all.Append(Encoding.UTF8.GetString(_buffer, 0, read));
            }
        }
        catch (IOException)
        {
            // A reset after the server's close counts as closed.
            return all.ToString();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stream.DisposeAsync();
        await _network.DisposeAsync();
    }
}
