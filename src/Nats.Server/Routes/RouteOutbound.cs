using System.Buffers;
using System.Buffers.Text;
using Nats.Server.Clients;

namespace Nats.Server.Routes;

/// <summary>
/// The route protocol's side of writing (RMSG/HMSG, RS+/RS-, protocol lines): it formats and hands
/// every frame to the route's <see cref="OutboundQueue"/>, the same pooled-chunk queue, write loop,
/// inline flush and stall gate every client has. It holds no buffer of its own.
/// </summary>
internal sealed class RouteOutbound
{
    private readonly OutboundQueue _queue;

    public RouteOutbound(OutboundQueue queue) => _queue = queue;

    /// <summary>The shared queue underneath (publishers add it to their flush batch).</summary>
    public OutboundQueue Queue => _queue;

    /// <summary>Bytes queued and not yet written.</summary>
    public long Pending => _queue.PendingAndInFlight;

    /// <summary>When the send in progress started; 0 when none is (for the write deadline).</summary>
    public long WriteStartedTicks => _queue.WriteStartedTicks;

    public ref long OutMsgs => ref _queue.OutMsgs;
    public ref long OutBytes => ref _queue.OutBytes;

    /// <summary>A protocol line, written as soon as the write loop gets to it.</summary>
    public void Append(ReadOnlySpan<byte> bytes)
    {
        if (_queue.Write(bytes))
        {
            _queue.SignalFlush();
        }
    }

    /// <summary>RS+/RS- for one subject: <c>RS+ acc subject[ queue weight]</c>, <c>RS- acc subject[ queue]</c>.</summary>
    public void AppendInterest(bool add, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight,
        ReadOnlySpan<byte> origin = default)
    {
        var size = account.Length + subject.Length + queue.Length + origin.Length + 32;
        byte[]? rented = null;
        var span = size <= 512 ? stackalloc byte[512] : (rented = ArrayPool<byte>.Shared.Rent(size));
        var n = 0;
        // Interest of a leaf connection carries its cluster (Go's LS+ origin acc subject; LS- acc subject).
        (origin.IsEmpty ? add ? "RS+ "u8 : "RS- "u8 : add ? "LS+ "u8 : "LS- "u8).CopyTo(span);
        n += 4;
        if (add && !origin.IsEmpty)
        {
            n += Put(span[n..], origin);
            span[n++] = (byte)' ';
        }
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
        Append(span[..n]);
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>A leaf connection's interest line (Go's writeLeafSub): <c>LS+ key[ weight]</c> (the key is "subject"
    /// or "subject queue"), or <c>LS- key</c> when <paramref name="count"/> is 0.</summary>
    public void AppendLeafInterest(string key, int count)
    {
        var line = count <= 0 ? $"LS- {key}\r\n" : key.Contains(' ') ? $"LS+ {key} {count}\r\n" : $"LS+ {key}\r\n";
        Append(System.Text.Encoding.UTF8.GetBytes(line));
    }

    /// <summary>
    /// One message for the peer (a route's, or with an empty <paramref name="account"/> a leaf connection's):
    /// <c>HMSG acc subject [reply | + reply queues | | queues] hdr total</c> when
    /// both sides speak headers and there are some, else <c>RMSG ... size</c> without the header block.
    /// <paramref name="message"/> is the header block and payload followed by CRLF. Not signalled: the
    /// publisher adds <see cref="Queue"/> to its flush batch. False when the route is closed.
    /// </summary>
    public bool AppendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, bool peerHeaders, long stallThreshold, bool canStall, out bool stall,
        byte[]? origin = null)
    {
        // Toward a route, a message from a leaf of another cluster is LMSG origin acc ..., always with a header size.
        var leafOrigin = origin is { Length: > 0 } && !account.IsEmpty;
        var withHeaders = leafOrigin || (headerSize > 0 && peerHeaders);
        var body = headerSize > 0 && !peerHeaders ? message[headerSize..] : message;
        var size = account.Length + subject.Length + reply.Length + queues.Length + (origin?.Length ?? 0) + 40;
        byte[]? rented = null;
        var span = size <= 512 ? stackalloc byte[512] : (rented = ArrayPool<byte>.Shared.Rent(size));
        var n = 0;
        // A leaf connection's account is implied by the connection: LMSG/HMSG carry none.
        (leafOrigin ? "LMSG "u8 : withHeaders ? "HMSG "u8 : account.IsEmpty ? "LMSG "u8 : "RMSG "u8).CopyTo(span);
        n += 5;
        if (leafOrigin)
        {
            n += Put(span[n..], origin);
            span[n++] = (byte)' ';
        }
        if (!account.IsEmpty)
        {
            n += Put(span[n..], account);
            span[n++] = (byte)' ';
        }
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
            Utf8Formatter.TryFormat(headerSize > 0 && peerHeaders ? headerSize : 0, span[n..], out var h);
            n += h;
            span[n++] = (byte)' ';
        }
        Utf8Formatter.TryFormat(body.Length - 2, span[n..], out var s);
        n += s;
        span[n++] = (byte)'\r';
        span[n++] = (byte)'\n';
        var queued = _queue.AppendFrame(span[..n], body, stallThreshold, canStall, out stall);
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
        return queued;
    }

    private static int Put(Span<byte> destination, ReadOnlySpan<byte> source)
    {
        source.CopyTo(destination);
        return source.Length;
    }

    /// <summary>Writes whatever is queued until the route closes or the socket fails.</summary>
    public Task RunWriteLoopAsync() => _queue.RunWriteLoopAsync();

    /// <summary>Stops the write loop once it has written what is queued now (the -ERR before a close).</summary>
    public void Close()
    {
        _queue.TryClose();
        _queue.ReleaseStallIfDrained();
        _queue.SignalFlush();
    }
}
