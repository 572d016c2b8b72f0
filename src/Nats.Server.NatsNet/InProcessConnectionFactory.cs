using Nats.Server.Embedding;
using NATS.Client.Core;

namespace Nats.Server.NatsNet;

/// <summary>
/// A NATS.Net socket connection factory that opens in-process connections to an embedded server
/// (<see cref="NatsServerHost.ConnectInProcess"/>) instead of TCP sockets. The URL in NatsOpts is not dialled.
/// </summary>
public sealed class InProcessConnectionFactory(NatsServerHost server) : INatsSocketConnectionFactory
{
    /// <inheritdoc />
    public ValueTask<INatsSocketConnection> ConnectAsync(Uri uri, NatsOpts opts, CancellationToken cancellationToken) =>
        ValueTask.FromResult<INatsSocketConnection>(new PipeSocketConnection(server.ConnectInProcess()));
}

/// <summary>NatsOpts for an in-process connection to an embedded server.</summary>
public static class NatsServerHostNatsNetExtensions
{
    /// <summary>
    /// <paramref name="opts"/> (or the defaults) connected to <paramref name="server"/> in-process: no socket,
    /// admitted by the server like any client.
    /// </summary>
    public static NatsOpts InProcessOpts(this NatsServerHost server, NatsOpts? opts = null) =>
        (opts ?? NatsOpts.Default) with { Url = server.ClientUrl, SocketConnectionFactory = new InProcessConnectionFactory(server) };
}
