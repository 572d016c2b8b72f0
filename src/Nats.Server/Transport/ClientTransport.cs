using System.Net;

namespace Nats.Server.Transport;

/// <summary>
/// The byte pipe under a client connection. Plain TCP uses the socket directly (<see cref="SocketTransport"/>);
/// TLS (<see cref="TlsTransport"/>), WebSocket (<see cref="WebSocketTransport"/>, <see cref="WebSocketStreamTransport"/>)
/// and the embedded host's in-process pipe (<see cref="PipeTransport"/>) wrap a stream or a pipe. Calls are
/// per batch, never per message, so the virtual dispatch is noise.
/// </summary>
internal abstract class ClientTransport : IDisposable
{
    public abstract EndPoint? RemoteEndPoint { get; }

    /// <summary>The socket's peer; null once the socket is disposed.</summary>
    protected static EndPoint? RemoteEndPointOf(System.Net.Sockets.Socket socket)
    {
        try
        {
            return socket.RemoteEndPoint;
        }
        catch (ObjectDisposedException)
        {
            return null;
        }
    }

    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>Sends some or all of the data; returns how many bytes went out.</summary>
    public abstract ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken);

    /// <summary>
    /// Whether <see cref="TrySendNow"/> can write without blocking. A publisher's read loop flushes its
    /// receivers inline only through transports that can (plain TCP); TLS or WebSocket framing, which
    /// cannot take a partial write back, leave it to the connection's write loop.
    /// </summary>
    public virtual bool CanSendNow => false;

    /// <summary>
    /// Writes what the transport takes at once, never blocking: returns the bytes sent (possibly fewer
    /// than offered, 0 when it would block) or -1 when the connection is broken.
    /// </summary>
    public virtual int TrySendNow(ReadOnlySpan<byte> data) => 0;

    /// <summary>
    /// Bytes a <see cref="TrySendNow"/> accepted but could not put on the wire yet (TLS records
    /// encrypted in one piece); the write loop sends them with <see cref="SendAsync"/> of nothing.
    /// </summary>
    public virtual bool HasPendingOutput => false;

    /// <summary>Called by the admission door once the connection has its id (TLS logs with it).</summary>
    public virtual void OnAdmitted(ulong clientId)
    {
    }

    /// <summary>Stops both directions so pending reads and writes complete promptly.</summary>
    public abstract void Abort();

    /// <summary>The negotiated TLS session, when this transport is TLS and the handshake is done.</summary>
    public virtual TlsConnectionState? Tls => null;

    /// <summary>The connection type users' allowed_connection_types name (STANDARD, WEBSOCKET).</summary>
    public virtual string ConnectionType => Auth.ConnectionTypes.Standard;

    /// <summary>WebSocket clients authenticate against the websocket {} block's settings.</summary>
    public virtual bool IsWebSocket => false;

    public abstract void Dispose();
}
