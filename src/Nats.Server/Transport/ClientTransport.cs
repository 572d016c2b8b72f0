using System.Net;

namespace Nats.Server.Transport;

/// <summary>
/// The byte pipe under a client connection. Plain TCP uses the socket directly; TLS and WebSocket
/// (later) wrap a stream. Calls are per batch, never per message, so the virtual dispatch is noise.
/// </summary>
internal abstract class ClientTransport : IDisposable
{
    public abstract EndPoint? RemoteEndPoint { get; }

    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>Sends some or all of the data; returns how many bytes went out.</summary>
    public abstract ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken);

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
