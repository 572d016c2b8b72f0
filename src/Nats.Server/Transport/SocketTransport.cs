using System.Net;
using System.Net.Sockets;

namespace Nats.Server.Transport;

/// <summary>Plain TCP: the socket's own ValueTask-based receive and send allocate nothing per call.</summary>
internal sealed class SocketTransport : ClientTransport
{
    private readonly Socket _socket;
    private int _aborted;

    public SocketTransport(Socket socket)
    {
        _socket = socket;
        _socket.NoDelay = true;
        // Async operations are unaffected; synchronous sends (the inline flush) return WouldBlock instead of stalling.
        _socket.Blocking = false;
    }

    public override bool CanSendNow => true;

    public override int TrySendNow(ReadOnlySpan<byte> data)
    {
        var sent = _socket.Send(data, SocketFlags.None, out var error);
        return error switch
        {
            SocketError.Success => sent,
            SocketError.WouldBlock => Math.Max(sent, 0),
            _ => -1,
        };
    }

    public override EndPoint? RemoteEndPoint => RemoteEndPointOf(_socket);

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken) =>
        _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);

    public override ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken) =>
        _socket.SendAsync(data, SocketFlags.None, cancellationToken);

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
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }
        _socket.Close();
    }

    public override void Dispose() => Abort();
}
