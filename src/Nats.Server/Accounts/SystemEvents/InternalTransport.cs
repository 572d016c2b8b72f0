using System.Net;
using Nats.Server.Transport;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>The "socket" of the server's internal client: it never runs a read or write loop.</summary>
internal sealed class InternalTransport : ClientTransport
{
    public static InternalTransport Instance { get; } = new();

    public override EndPoint? RemoteEndPoint => null;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken) => ValueTask.FromResult(0);

    public override ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken) => ValueTask.FromResult(data.Length);

    public override void Abort()
    {
    }

    public override void Dispose()
    {
    }
}
