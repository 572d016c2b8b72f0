using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Configuration;

namespace Nats.Server.Hosting;

/// <summary>The server: owns the listener, the clients and the subscription index.</summary>
public sealed class NatsServer : IAsyncDisposable
{
    public NatsServer(ServerOptions options, ILoggerFactory? loggerFactory = null)
    {
        Options = options;
        LoggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
    }

    public ILoggerFactory LoggerFactory { get; }

    public ServerOptions Options { get; }

    /// <summary>The port actually bound (differs from Options.Port when that was 0).</summary>
    public int Port { get; private set; }

    /// <summary>Binds the listener and starts accepting clients; returns once the port is bound.</summary>
    public Task StartAsync(CancellationToken cancellationToken = default) => throw new NotImplementedException();

    /// <summary>Stops accepting, flushes and closes every client.</summary>
    public Task ShutdownAsync() => throw new NotImplementedException();

    public async ValueTask DisposeAsync() => await ShutdownAsync();
}
