using System.Net;
using System.Runtime.CompilerServices;
using Nats.Server.WebSocket;

namespace Nats.Server.Transport;

/// <summary>
/// NATS over an uncompressed WebSocket, framed here on Kestrel's upgraded stream: reads take as much
/// as has arrived (many client frames per read) and unmask straight into the read loop's buffer;
/// each outbound chunk (a whole coalesced batch) goes out as one binary frame in one write. Compressed
/// connections use the SDK's WebSocket (<see cref="WebSocketTransport"/>) instead.
/// </summary>
internal sealed class WebSocketStreamTransport : ClientTransport
{
    private const int ReceiveBufferSize = 64 * 1024;
    private const int MaxFrameHeader = 10;
    private const ushort NormalClosure = 1000;
    private const ushort ProtocolError = 1002;

    private readonly Stream _stream;
    private readonly EndPoint? _remote;
    private readonly FrameDecoder _decoder;
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    // Plain arrays, not pooled: a read may still be pending on them when the connection is torn down.
    private readonly byte[] _receive = new byte[ReceiveBufferSize];
    private byte[] _send = new byte[16 * 1024];
    // An inline write whose flush waits for Kestrel's output pipe; _send stays untouched until it completes.
    private volatile Task? _pendingWrite;
    private int _start;
    private int _end;
    private bool _closeReceived;
    private int _closeSent;

    public WebSocketStreamTransport(Stream stream, EndPoint? remote, bool clientMasks = true)
    {
        _decoder = new FrameDecoder { ExpectMasked = clientMasks };
        _stream = stream;
        _remote = remote;
    }

    public override EndPoint? RemoteEndPoint => _remote;

    public override string ConnectionType => Auth.ConnectionTypes.Websocket;

    public override bool IsWebSocket => true;

    /// <summary>Completes when the connection is over; the upgrade handler then closes the WebSocket.</summary>
    public Task Closed => _closed.Task;

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                if (_closeReceived)
                {
                    return 0;
                }
                var receive = _receive;
                var consumed = _decoder.Decode(receive.AsSpan(_start, _end - _start), buffer.Span, out var written, out var frameEvent);
                _start += consumed;
                switch (frameEvent)
                {
                    case FrameEvent.Ping:
                        await SendControlAsync(0xA, _decoder.ControlPayload.ToArray(), cancellationToken).ConfigureAwait(false);
                        break;
                    case FrameEvent.Close:
                        _closeReceived = true;
                        break;
                    case FrameEvent.ProtocolError:
                        await SendCloseAsync(ProtocolError, cancellationToken).ConfigureAwait(false);
                        throw new IOException("The WebSocket client sent an invalid frame.");
                }
                if (written > 0 || (buffer.Length == 0 && frameEvent == FrameEvent.None))
                {
                    return written;
                }
                if (frameEvent != FrameEvent.None)
                {
                    continue;
                }
                if (_start == _end)
                {
                    _start = _end = 0;
                }
                else if (_end == receive.Length)
                {
                    // An incomplete header or control frame at the end: move it to the front and read on.
                    receive.AsSpan(_start, _end - _start).CopyTo(receive);
                    _end -= _start;
                    _start = 0;
                }
                var read = await _stream.ReadAsync(receive.AsMemory(_end), cancellationToken).ConfigureAwait(false);
                if (read == 0)
                {
                    return 0;
                }
                _end += read;
            }
        }
        catch (Exception e) when (e is OperationCanceledException or InvalidOperationException)
        {
            // Kestrel ends a pending read this way when the connection goes away under it.
            throw new IOException(e.Message, e);
        }
    }

    /// <summary>
    /// Kestrel's upgraded stream copies a write into its output pipe before returning, and its flush
    /// only waits when the pipe is over its limit: so a batch can be framed and handed over from the
    /// publisher's read loop without blocking (the inline flush), and a flush that would wait is left
    /// pending for the write loop (<see cref="HasPendingOutput"/>).
    /// </summary>
    public override bool CanSendNow => true;

    public override bool HasPendingOutput => _pendingWrite is not null;

    public override int TrySendNow(ReadOnlySpan<byte> data)
    {
        if (!_writeLock.Wait(0))
        {
            // A control frame is going out: the write loop takes over.
            return 0;
        }
        try
        {
            if (_pendingWrite is { } pending)
            {
                if (!pending.IsCompletedSuccessfully)
                {
                    // Still waiting for the pipe (or failed: the write loop reports it).
                    return 0;
                }
                _pendingWrite = null;
            }
            var write = _stream.WriteAsync(Frame(data), CancellationToken.None);
            if (!write.IsCompleted)
            {
                _pendingWrite = write.AsTask();
                return data.Length;
            }
            write.GetAwaiter().GetResult();
            return data.Length;
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or OperationCanceledException or InvalidOperationException)
        {
            return -1;
        }
        finally
        {
            _writeLock.Release();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        await _writeLock.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_pendingWrite is { } pending)
            {
                _pendingWrite = null;
                await pending.ConfigureAwait(false);
            }
            if (data.Length > 0)
            {
                await _stream.WriteAsync(Frame(data.Span), cancellationToken).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or InvalidOperationException)
        {
            throw new IOException(e.Message, e);
        }
        finally
        {
            _writeLock.Release();
        }
        return data.Length;
    }

    /// <summary>Header and payload in one buffer, so a batch is one frame and one write to the connection.</summary>
    private ReadOnlyMemory<byte> Frame(ReadOnlySpan<byte> data)
    {
        var needed = data.Length + MaxFrameHeader;
        if (_send.Length < needed)
        {
            _send = new byte[Math.Max(needed, _send.Length * 2)];
        }
        var headerLength = FrameDecoder.WriteHeader(_send, 0x2, data.Length);
        data.CopyTo(_send.AsSpan(headerLength));
        return _send.AsMemory(0, headerLength + data.Length);
    }

    /// <summary>Sends the normal close frame unless one went out already (as the SDK's CloseOutputAsync would).</summary>
    public Task CloseAsync(CancellationToken cancellationToken) => SendCloseAsync(NormalClosure, cancellationToken);

    public override void Abort() => _closed.TrySetResult();

    public override void Dispose() => Abort();

    private async Task SendCloseAsync(ushort code, CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _closeSent, 1) != 0)
        {
            return;
        }
        await SendControlAsync(0x8, [(byte)(code >> 8), (byte)code], cancellationToken).ConfigureAwait(false);
    }

    private async Task SendControlAsync(int opcode, byte[] payload, CancellationToken cancellationToken)
    {
        var frame = new byte[2 + payload.Length];
        FrameDecoder.WriteHeader(frame, opcode, payload.Length);
        payload.CopyTo(frame, 2);
        await _writeLock.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_pendingWrite is { } pending)
            {
                _pendingWrite = null;
                await pending.ConfigureAwait(false);
            }
            await _stream.WriteAsync(frame, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _writeLock.Release();
        }
    }
}
