using System.Net.Sockets;

namespace Nats.Server.Transport;

/// <summary>
/// SslStream's inner stream on a TLS connection. Reads and the handshake go to the network; while
/// <see cref="Capturing"/> is set, the records SslStream writes go out with a non-blocking send
/// straight from SslStream's buffer (the inline flush), and what the socket did not take is kept
/// here, in order, for the next send.
/// </summary>
internal sealed class CiphertextStream(NetworkStream network) : Stream
{
    private readonly Lock _sync = new();
    private byte[] _pending = new byte[32 * 1024];
    private int _start;
    private int _end;

    public volatile bool Capturing;

    // A non-blocking send in Write failed: the connection is broken, and the next send says so.
    private bool _broken;

    public bool HasPending
    {
        get
        {
            lock (_sync)
            {
                return _end > _start;
            }
        }
    }

    /// <summary>Sends captured ciphertext without blocking: true when all of it went out, false when the socket is full.</summary>
    public bool TrySendPending(Socket socket, out bool broken)
    {
        lock (_sync)
        {
            broken = _broken;
            if (broken)
            {
                return false;
            }
            while (_end > _start)
            {
                var sent = socket.Send(_pending.AsSpan(_start, _end - _start), SocketFlags.None, out var error);
                if (error == SocketError.WouldBlock)
                {
                    return false;
                }
                if (error != SocketError.Success)
                {
                    broken = true;
                    return false;
                }
                _start += sent;
            }
            _start = _end = 0;
            return true;
        }
    }

    /// <summary>Sends captured ciphertext, waiting for the socket as needed.</summary>
    public async ValueTask SendPendingAsync(Socket socket, CancellationToken cancellationToken)
    {
        while (true)
        {
            ReadOnlyMemory<byte> chunk;
            lock (_sync)
            {
                if (_broken)
                {
                    throw new IOException("TLS connection broken");
                }
                if (_end == _start)
                {
                    _start = _end = 0;
                    return;
                }
                chunk = _pending.AsMemory(_start, _end - _start);
            }
            // Only the sending-flag holder sends or captures, so the chunk stays put while it goes out.
            var sent = await socket.SendAsync(chunk, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            lock (_sync)
            {
                _start += sent;
            }
        }
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override int Read(byte[] buffer, int offset, int count) => network.Read(buffer, offset, count);

    public override int Read(Span<byte> buffer) => network.Read(buffer);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        network.ReadAsync(buffer, offset, count, cancellationToken);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        network.ReadAsync(buffer, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        if (!Capturing)
        {
            network.Write(buffer);
            return;
        }
        Append(buffer);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!Capturing)
        {
            return network.WriteAsync(buffer, cancellationToken);
        }
        Append(buffer.Span);
        return ValueTask.CompletedTask;
    }

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private void Append(ReadOnlySpan<byte> data)
    {
        lock (_sync)
        {
            if (_end == _start && !_broken)
            {
                // Nothing queued ahead: send from SslStream's own buffer and keep only what the socket refused.
                _start = _end = 0;
                var sent = network.Socket.Send(data, SocketFlags.None, out var error);
                if (error is not (SocketError.Success or SocketError.WouldBlock))
                {
                    _broken = true;
                    return;
                }
                data = data[Math.Max(sent, 0)..];
                if (data.IsEmpty)
                {
                    return;
                }
            }
            if (_end + data.Length > _pending.Length)
            {
                var live = _end - _start;
                var target = live + data.Length > _pending.Length ? new byte[Math.Max(_pending.Length * 2, live + data.Length)] : _pending;
                _pending.AsSpan(_start, live).CopyTo(target);
                _pending = target;
                _start = 0;
                _end = live;
            }
            data.CopyTo(_pending.AsSpan(_end));
            _end += data.Length;
        }
    }
}
