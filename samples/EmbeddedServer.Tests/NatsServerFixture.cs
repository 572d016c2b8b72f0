using Nats.Server.Embedding;
using NATS.Client.Core;

namespace EmbeddedServer.Tests;

/// <summary>
/// One embedded NATS server for every test of a class (xunit's IClassFixture): no binary to install,
/// no container, a free port, gone when the tests finish.
/// </summary>
public sealed class NatsServerFixture : IAsyncLifetime
{
    public NatsServerHost Server { get; private set; } = null!;

    public async Task InitializeAsync() => Server = await NatsServerHost.StartAsync();

    public NatsConnection Connect() => new(new NatsOpts { Url = Server.ClientUrl });

    public async Task DisposeAsync() => await Server.DisposeAsync();
}
