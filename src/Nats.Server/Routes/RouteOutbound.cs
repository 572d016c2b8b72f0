using System.Buffers.Text;
using System.Net.Sockets;
using Nats.Server.Clients;

namespace Nats.Server.Routes;

/// <summary>
/// A route's outbound side: producers (publishers' RMSGs, interest updates, protocol lines) append
/// under one lock to a pending buffer; the write loop swaps it with the one it just wrote and sends
/// it whole, so a busy route writes in large batches. A route is never cut for pending bytes, only
/// when a write makes no progress for the write deadline (Go's rule), checked by the cluster's tick.
/// </summary>
internal sealed class RouteOutbound
{
    private const int InitialSize = 64 * 1024;

    private readonly Socket _socket;
    private readonly Lock _sync = new();
    private readonly AsyncSignal _signal = new();
    private byte[] _pending = new byte[InitialSize];
    private byte[] _writing = new byte[InitialSize];
    private int _length;
    private volatile bool _closed;
    private long _writeStartedTicks;

    public long OutMsgs;
    public long OutBytes;

    public RouteOutbound(Socket socket) => _socket = socket;

    /// <summary>Bytes queued and not yet handed to the socket.</summary>
    public int Pending => Volatile.Read(ref _length);

    /// <summary>Tick count when the send in progress started; 0 when none is.</summary>
    public long WriteStartedTicks => Volatile.Read(ref _writeStartedTicks);

    public void Append(ReadOnlySpan<byte> bytes)
    {
        lock (_sync)
        {
            if (_closed)
            {
                return;
            }
            bytes.CopyTo(Reserve(bytes.Length));
            _length += bytes.Length;
        }
        _signal.Set();
    }

    /// <summary>RS+/RS- for one subject: <c>RS+ acc subject[ queue weight]</c>, <c>RS- acc subject[ queue]</c>.</summary>
    public void AppendInterest(bool add, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight)
    {
        lock (_sync)
        {
            if (_closed)
            {
                return;
            }
            var span = Reserve(account.Length + subject.Length + queue.Length + 32);
            var n = 0;
            (add ? "RS+ "u8 : "RS- "u8).CopyTo(span);
            n += 4;
            n += Put(span[n..], account);
            span[n++] = (byte)' ';
            n += Put(span[n..], subject);
            if (!queue.IsEmpty)
            {
                span[n++] = (byte)' ';
                n += Put(span[n..], queue);
                if (add)
                {
                    span[n++] = (byte)' ';
                    Utf8Formatter.TryFormat(weight, span[n..], out var w);
                    n += w;
                }
            }
            span[n++] = (byte)'\r';
            span[n++] = (byte)'\n';
            _length += n;
        }
        _signal.Set();
    }

    /// <summary>
    /// One message for the peer: <c>HMSG acc subject [reply | + reply queues | | queues] hdr total</c> when
    /// both sides speak headers and there are some, else <c>RMSG ... size</c> without the header block.
    /// <paramref name="message"/> is the header block and payload followed by CRLF.
    /// </summary>
    public void AppendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, bool peerHeaders)
    {
        var withHeaders = headerSize > 0 && peerHeaders;
        var body = headerSize > 0 && !peerHeaders ? message[headerSize..] : message;
        lock (_sync)
        {
            if (_closed)
            {
                return;
            }
            var span = Reserve(account.Length + subject.Length + reply.Length + queues.Length + 40 + body.Length);
            var n = 0;
            (withHeaders ? "HMSG "u8 : "RMSG "u8).CopyTo(span);
            n += 5;
            n += Put(span[n..], account);
            span[n++] = (byte)' ';
            n += Put(span[n..], subject);
            if (!queues.IsEmpty)
            {
                span[n++] = (byte)' ';
                if (!reply.IsEmpty)
                {
                    span[n++] = (byte)'+';
                    span[n++] = (byte)' ';
                    n += Put(span[n..], reply);
                    span[n++] = (byte)' ';
                }
                else
                {
                    span[n++] = (byte)'|';
                    span[n++] = (byte)' ';
                }
                n += Put(span[n..], queues);
            }
            else if (!reply.IsEmpty)
            {
                span[n++] = (byte)' ';
                n += Put(span[n..], reply);
            }
            span[n++] = (byte)' ';
            if (withHeaders)
            {
                Utf8Formatter.TryFormat(headerSize, span[n..], out var h);
                n += h;
                span[n++] = (byte)' ';
            }
            Utf8Formatter.TryFormat(body.Length - 2, span[n..], out var s);
            n += s;
            span[n++] = (byte)'\r';
            span[n++] = (byte)'\n';
            n += Put(span[n..], body);
            _length += n;
            OutMsgs++;
            OutBytes += body.Length - 2;
        }
        _signal.Set();
    }

    private static int Put(Span<byte> destination, ReadOnlySpan<byte> source)
    {
        source.CopyTo(destination);
        return source.Length;
    }

    // Under the lock: room for at least <paramref name="size"/> more bytes at the end of the pending buffer.
    private Span<byte> Reserve(int size)
    {
        if (_pending.Length - _length < size)
        {
            Array.Resize(ref _pending, Math.Max(_length + size, _pending.Length * 2));
        }
        return _pending.AsSpan(_length);
    }

    /// <summary>Writes whatever is queued until the route closes or the socket fails.</summary>
    public async Task RunWriteLoopAsync()
    {
        try
        {
            while (true)
            {
                var closing = _closed;
                if (!closing)
                {
                    await _signal.WaitAsync().ConfigureAwait(false);
                }
                while (true)
                {
                    int length;
                    lock (_sync)
                    {
                        length = _length;
                        if (length == 0)
                        {
                            break;
                        }
                        (_pending, _writing) = (_writing, _pending);
                        _length = 0;
                    }
                    Volatile.Write(ref _writeStartedTicks, Environment.TickCount64);
                    var sent = 0;
                    while (sent < length)
                    {
                        sent += await _socket.SendAsync(_writing.AsMemory(sent, length - sent), SocketFlags.None).ConfigureAwait(false);
                        Volatile.Write(ref _writeStartedTicks, Environment.TickCount64);
                    }
                    Volatile.Write(ref _writeStartedTicks, 0);
                    // A burst may have grown the buffer a lot: do not keep it once written.
                    if (_writing.Length > 4 * 1024 * 1024)
                    {
                        _writing = new byte[InitialSize];
                    }
                }
                if (closing)
                {
                    // What was queued before the close (the -ERR) is written; nothing after it.
                    return;
                }
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or InvalidOperationException)
        {
        }
        finally
        {
            Volatile.Write(ref _writeStartedTicks, 0);
        }
    }

    /// <summary>Stops the write loop once it has written what is queued now (the -ERR before a close).</summary>
    public void Close()
    {
        _closed = true;
        _signal.Set();
    }
}
