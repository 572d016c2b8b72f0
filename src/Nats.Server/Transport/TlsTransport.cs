using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Logging;
using Nats.Server.Tls;

namespace Nats.Server.Transport;

/// <summary>
/// TLS over the client socket with SslStream, upgraded the way Go does it: INFO goes out in plain
/// text, then the server side of the handshake runs (started by the read loop's first receive) within
/// the tls timeout. With handshake_first the handshake comes before INFO. Sends issued before the
/// handshake finished wait for it; each send is one SslStream write of a whole outbound chunk, so
/// messages are encrypted in batches, never one by one.
/// As Go's createClient: handshake_first with a fallback delay waits that long for the client's hello
/// and sends INFO in plain text if none came; allow_non_tls looks at the first byte after INFO and
/// serves a client that does not start a handshake in plain text; connection_rate_limit refuses
/// handshakes over the limit with Go's -ERR.
/// </summary>
internal sealed class TlsTransport : ClientTransport
{
    private readonly Socket _socket;
    private readonly TlsServerContext _context;
    private readonly ILogger _logger;
    private string _client;
    private readonly NetworkStream _network;
    private readonly CiphertextStream _cipher;
    private readonly SslStream _ssl;
    private readonly ClientCertificateVerifier _verifier;
    private readonly TaskCompletionSource _infoSent = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<bool> _handshake = new(TaskCreationOptions.RunContinuationsAsynchronously);
    // handshake_first with a fallback delay: true once the client spoke first (TLS first), false when INFO goes first.
    private readonly TaskCompletionSource<bool>? _tlsFirst;
    private readonly bool _allowNonTls;
    private readonly string _idLabel;
    private int _handshakeStarted;
    private int _aborted;
    // allow_non_tls and the client did not start a handshake: the socket carries plain text.
    private volatile bool _plain;
    private ClosedReasonHint _failure = ClosedReasonHint.HandshakeError;

    /// <param name="tlsFirst">The connection starts with the handshake and has no INFO (the MQTT port with tls {}, as Go's).</param>
    /// <param name="idLabel">How logs name the connection id: "cid" for a NATS client, "mid" for an MQTT one (Go's).</param>
    public TlsTransport(Socket socket, TlsServerContext context, ILogger logger, bool allowNonTls = false, bool tlsFirst = false, string idLabel = "cid")
    {
        _idLabel = idLabel;
        _allowNonTls = allowNonTls;
        _socket = socket;
        _socket.NoDelay = true;
        _context = context;
        _logger = logger;
        _client = FormatEndPoint(socket.RemoteEndPoint);
        _network = new NetworkStream(socket, ownsSocket: false);
        // After the stream is made (it wants a blocking socket): async I/O is unaffected, and the inline
        // flush's synchronous sends return WouldBlock instead of stalling the publisher's read loop.
        _socket.Blocking = false;
        _cipher = new CiphertextStream(_network);
        _verifier = new ClientCertificateVerifier(context);
        _ssl = new SslStream(_cipher, leaveInnerStreamOpen: true);
        if (tlsFirst)
        {
            _infoSent.TrySetResult();
        }
        else if (context.Options.HandshakeFirst)
        {
            if (context.Options.HandshakeFirstFallback > TimeSpan.Zero)
            {
                _tlsFirst = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            }
            else
            {
                _infoSent.TrySetResult();
            }
        }
    }

    private bool Secured => _handshake.Task.IsCompletedSuccessfully && _handshake.Task.Result;

    /// <summary>
    /// Once the handshake is done, a batch can be encrypted in memory (SslStream over
    /// <see cref="CiphertextStream"/>) and sent without blocking, like plain TCP's inline flush.
    /// </summary>
    public override bool CanSendNow => Secured;

    public override bool HasPendingOutput => _cipher.HasPending;

    public override int TrySendNow(ReadOnlySpan<byte> data)
    {
        if (!Secured || Volatile.Read(ref _aborted) != 0)
        {
            return 0;
        }
        if (_plain)
        {
            var sent = _socket.Send(data, SocketFlags.None, out var error);
            return error switch
            {
                SocketError.Success => sent,
                SocketError.WouldBlock => Math.Max(sent, 0),
                _ => -1,
            };
        }
        try
        {
            // Ciphertext left from an earlier batch goes first; while the socket is full, take nothing new.
            if (!_cipher.TrySendPending(_socket, out var broken))
            {
                return broken ? -1 : 0;
            }
            _cipher.Capturing = true;
            try
            {
                _ssl.Write(data);
            }
            finally
            {
                _cipher.Capturing = false;
            }
            // What the socket does not take now stays captured (HasPendingOutput) for the write loop.
            _cipher.TrySendPending(_socket, out broken);
            return broken ? -1 : data.Length;
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException)
        {
            return -1;
        }
    }

    public override void OnAdmitted(ulong clientId) => _client = $"{_client} - {_idLabel}:{clientId}";

    public override EndPoint? RemoteEndPoint => RemoteEndPointOf(_socket);

    /// <summary>Captured when the handshake completes, so closed connections still report it (as Go's closed-client record does).</summary>
    public override TlsConnectionState? Tls => _state;

    private TlsConnectionState? _state;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        if (_handshake.Task.IsCompletedSuccessfully && _handshake.Task.Result)
        {
            return _plain ? _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken) : _ssl.ReadAsync(buffer, cancellationToken);
        }
        return HandshakeThenReceiveAsync(buffer, cancellationToken);
    }

    public override ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        if (!_infoSent.Task.IsCompleted)
        {
            // The plain-text INFO that precedes the upgrade (only one send runs at a time).
            return SendInfoAsync(data, cancellationToken);
        }
        return WriteSecureAsync(data, cancellationToken);
    }

    public override void Abort()
    {
        if (Interlocked.Exchange(ref _aborted, 1) == 1)
        {
            return;
        }
        _infoSent.TrySetCanceled();
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
        _socket.Close();
        _handshake.TrySetResult(false);
        // Frees the native TLS session now rather than at finalization; pending reads and writes fail.
        _ssl.Dispose();
        _network.Dispose();
    }

    public override void Dispose() => Abort();

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> SendInfoAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        if (_tlsFirst is { } tlsFirst && await tlsFirst.Task.ConfigureAwait(false))
        {
            // The client started TLS within the fallback delay: INFO goes out encrypted, as with handshake_first.
            return await WriteSecureAsync(data, cancellationToken).ConfigureAwait(false);
        }
        var total = 0;
        while (total < data.Length)
        {
            total += await _socket.SendAsync(data[total..], SocketFlags.None, cancellationToken).ConfigureAwait(false);
        }
        _infoSent.TrySetResult();
        return total;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> WriteSecureAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        if (!_handshake.Task.IsCompleted && !await _handshake.Task.ConfigureAwait(false))
        {
            // The read loop reports the failure and closes the connection; nothing may go out in clear.
            return data.Length;
        }
        if (!_handshake.Task.Result)
        {
            return data.Length;
        }
        if (_plain)
        {
            var total = 0;
            while (total < data.Length)
            {
                total += await _socket.SendAsync(data[total..], SocketFlags.None, cancellationToken).ConfigureAwait(false);
            }
            return total;
        }
        await _cipher.SendPendingAsync(_socket, cancellationToken).ConfigureAwait(false);
        if (data.Length == 0)
        {
            return 0;
        }
        _cipher.Capturing = true;
        try
        {
            // Encrypting into memory never blocks; the records then go out in one send.
            _ssl.Write(data.Span);
        }
        finally
        {
            _cipher.Capturing = false;
        }
        await _cipher.SendPendingAsync(_socket, cancellationToken).ConfigureAwait(false);
        return data.Length;
    }

    private async ValueTask<int> HandshakeThenReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _handshakeStarted, 1) == 0)
        {
            await HandshakeAsync().ConfigureAwait(false);
        }
        if (!await _handshake.Task.ConfigureAwait(false))
        {
            throw new TlsHandshakeFailedException(_failure == ClosedReasonHint.Throttled);
        }
        if (_plain)
        {
            return await _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
        }
        return await _ssl.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
    }

    private async Task HandshakeAsync()
    {
        using var timeout = new CancellationTokenSource(_context.Timeout);
        string? error = null;
        var timedOut = false;
        try
        {
            if (_tlsFirst is { } tlsFirst)
            {
                // Go waits this long for any byte; only a TLS-first client speaks before INFO.
                var spoke = await PeekAsync(_context.Options.HandshakeFirstFallback).ConfigureAwait(false) > 0;
                if (spoke)
                {
                    _infoSent.TrySetResult();
                }
                tlsFirst.TrySetResult(spoke);
            }
            await _infoSent.Task.WaitAsync(timeout.Token).ConfigureAwait(false);
            var tlsFirstNow = _context.Options.HandshakeFirst && (_tlsFirst is null || _tlsFirst.Task.Result);
            if (_allowNonTls && !tlsFirstNow)
            {
                // Go reads up to 4 bytes within the TLS timeout: a handshake record starts with 0x16, anything else (or nothing) is plain.
                var first = new byte[1];
                var peeked = await PeekAsync(_context.Timeout, first).ConfigureAwait(false);
                if (peeked == 0 || first[0] != 0x16)
                {
                    _plain = true;
                    _handshake.TrySetResult(true);
                    return;
                }
            }
            if (_context.RateCounter is { } rate && !rate.Allow(_logger))
            {
                _failure = ClosedReasonHint.Throttled;
                await SendPlainAsync("-ERR 'Connection throttling is active. Please try again later.'\r\n"u8.ToArray()).ConfigureAwait(false);
                _handshake.TrySetResult(false);
                return;
            }
            _logger.LogDebug("{Client} - Starting TLS client connection handshake", _client);
            error = await CheckFirstRecordAsync(timeout.Token).ConfigureAwait(false);
            if (error is null)
            {
                await _ssl.AuthenticateAsServerAsync(_context.CreateServerOptions(_verifier), timeout.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && Volatile.Read(ref _aborted) == 0)
        {
            timedOut = true;
            error = $"read tcp {FormatEndPoint(SafeLocal())}->{FormatEndPoint(RemoteEndPoint)}: i/o timeout";
        }
        catch (Exception e)
        {
            // Whatever failed, the handshake must complete (as failed): a write waiting on it would otherwise never end.
            error = _verifier.FailureReason ?? DescribeFailure(e);
        }
        if (error is null && PinnedCertificates.Check(_context.Options.PinnedCerts, _ssl.RemoteCertificate) is { } unpinned)
        {
            _logger.LogDebug("{Client} - {Reason}", _client, unpinned);
            error = PinnedCertificates.NotPinned;
        }
        if (error is null)
        {
            var peer = _ssl.RemoteCertificate is { } presented ? presented as X509Certificate2 ?? new X509Certificate2(presented) : null;
            _state = new TlsConnectionState(TlsNames.VersionName(_ssl.SslProtocol), TlsNames.CipherName(_ssl.NegotiatedCipherSuite), peer);
            _logger.LogDebug("{Client} - TLS handshake complete", _client);
            _logger.LogDebug("{Client} - TLS version {Version}, cipher suite {Cipher}", _client, _state.Version, _state.CipherSuite);
            _handshake.TrySetResult(true);
            return;
        }
        if (Volatile.Read(ref _aborted) == 0)
        {
            _logger.LogError("{Client} - TLS handshake error: {Error}", _client, error);
            if (timedOut)
            {
                _logger.LogError("{Client} - TLS handshake timeout", _client);
            }
        }
        _handshake.TrySetResult(false);
    }

    /// <summary>Peeks at what the client sent within <paramref name="wait"/>; 0 when nothing came (or the connection ended).</summary>
    private async Task<int> PeekAsync(TimeSpan wait, byte[]? into = null)
    {
        using var timer = new CancellationTokenSource(wait);
        try
        {
            return await _socket.ReceiveAsync(into ?? new byte[1], SocketFlags.Peek, timer.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (timer.IsCancellationRequested)
        {
            return 0;
        }
        catch (SocketException)
        {
            return 0;
        }
    }

    private async Task SendPlainAsync(byte[] data)
    {
        try
        {
            var total = 0;
            while (total < data.Length)
            {
                total += await _socket.SendAsync(data.AsMemory(total), SocketFlags.None).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
    }

    /// <summary>
    /// Go's record-layer check on the first record: anything but a handshake (or alert) record with a
    /// plausible version is refused before any TLS parsing, which is what a plain-text client hits.
    /// </summary>
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

    private static string DescribeFailure(Exception e)
    {
        for (var inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is IOException io && io.Message.Contains("unexpected EOF", StringComparison.OrdinalIgnoreCase))
            {
                return "EOF";
            }
        }
        return e.InnerException is { } cause ? $"{e.Message} {cause.Message}" : e.Message;
    }

    private EndPoint? SafeLocal()
    {
        try
        {
            return _socket.LocalEndPoint;
        }
        catch (ObjectDisposedException)
        {
            return null;
        }
    }

    private static string FormatEndPoint(EndPoint? endPoint) => endPoint switch
    {
        IPEndPoint ip when ip.Address.IsIPv4MappedToIPv6 => $"{ip.Address.MapToIPv4()}:{ip.Port}",
        IPEndPoint ip => ip.ToString(),
        null => "?",
        _ => endPoint.ToString() ?? "?",
    };
}

/// <summary>
/// The TLS handshake failed (already logged); the client closes with Go's "TLS Handshake Failure", or
/// "Maximum Connections Exceeded" when connection_rate_limit refused it.
/// </summary>
internal sealed class TlsHandshakeFailedException(bool throttled = false) : IOException("TLS handshake failed")
{
    public bool Throttled { get; } = throttled;
}

/// <summary>Why a TLS transport's handshake did not happen, for the close reason.</summary>
internal enum ClosedReasonHint
{
    HandshakeError,
    Throttled,
}

/// <summary>What monitoring and authentication see of an established TLS session.</summary>
internal sealed record TlsConnectionState(string Version, string CipherSuite, X509Certificate2? PeerCertificate);
