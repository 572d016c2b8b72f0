using System.Net;
using System.Net.WebSockets;
using System.Runtime.CompilerServices;

namespace Nats.Server.Transport;

/// <summary>
/// The NATS protocol over a WebSocket (RFC 6455) accepted by Kestrel: text and binary frames are read
/// as one byte stream, each outbound chunk goes out as one binary frame. Framing, masking, fragments,
/// ping/pong and permessage-deflate are the SDK's WebSocket implementation. The HTTP request that
/// upgraded stays open until <see cref="Closed"/> completes.
/// </summary>
internal sealed class WebSocketTransport(System.Net.WebSockets.WebSocket socket, EndPoint? remote) : ClientTransport
{
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public override EndPoint? RemoteEndPoint => remote;

    public override string ConnectionType => Auth.ConnectionTypes.Websocket;

    public override bool IsWebSocket => true;

    /// <summary>Completes when the client is done with the socket; the upgrade handler then closes it.</summary>
    public Task Closed => _closed.Task;

    public System.Net.WebSockets.WebSocket Socket => socket;

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (true)
        {
            ValueWebSocketReceiveResult result;
            try
            {
                result = await socket.ReceiveAsync(buffer, cancellationToken).ConfigureAwait(false);
            }
            catch (WebSocketException e)
            {
                // A peer gone without a close frame reads as a closed client; a framing error as a read error.
                if (e.WebSocketErrorCode == WebSocketError.ConnectionClosedPrematurely)
                {
                    return 0;
                }
                throw new IOException(e.Message, e);
            }
            if (result.MessageType == WebSocketMessageType.Close)
            {
                return 0;
            }
            if (result.Count > 0 || buffer.Length == 0)
            {
                return result.Count;
            }
            // An empty frame carries nothing for the parser; read on.
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        try
        {
            await socket.SendAsync(data, WebSocketMessageType.Binary, endOfMessage: true, cancellationToken).ConfigureAwait(false);
        }
        catch (WebSocketException e)
        {
            throw new IOException(e.Message, e);
        }
        return data.Length;
    }

    public override void Abort() => _closed.TrySetResult();

    public override void Dispose() => Abort();
}
