using Microsoft.Extensions.Hosting;

namespace Nats.Server.Embedding;

/// <summary>Runs the container's <see cref="NatsServerHost"/> for the lifetime of the generic host.</summary>
internal sealed class NatsServerHostedService(NatsServerHost server) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken) => server.StartAsync(cancellationToken);

    public Task StopAsync(CancellationToken cancellationToken) => server.StopAsync(cancellationToken);
}
