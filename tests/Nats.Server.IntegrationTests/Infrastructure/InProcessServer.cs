using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>Our server hosted inside the test process, bound to a port the OS picks.</summary>
internal sealed class InProcessServer : ITestServer
{
    private readonly NatsServer _server;
    private readonly string? _ownedStoreDir;

    private InProcessServer(NatsServer server, string? ownedStoreDir)
    {
        _server = server;
        _ownedStoreDir = ownedStoreDir;
    }

    internal NatsServer Server => _server;

    public string Kind => "ours";

    public int Port => _server.Port;

    public static async Task<InProcessServer> StartAsync(ServerSettings settings)
    {
        var options = settings.ToServerOptions();
        string? ownedStoreDir = null;
        if (settings.JetStream)
        {
            options.JetStream.Enabled = true;
            options.JetStream.StoreDir = settings.StoreDir ?? (ownedStoreDir = Directory.CreateTempSubdirectory("nats-js-ours-").FullName);
        }
        var server = new NatsServer(options);
        try
        {
            await server.StartAsync();
        }
        catch (Exception startFailure)
        {
            // Release whatever a half-started server holds; the start failure is the error worth reporting.
            try
            {
                await server.DisposeAsync();
            }
            catch (Exception disposeFailure) when (disposeFailure is not OutOfMemoryException)
            {
                throw new AggregateException("server failed to start, then failed to stop", startFailure, disposeFailure);
            }

            throw;
        }

        return new InProcessServer(server, ownedStoreDir);
    }

    public async ValueTask DisposeAsync()
    {
        await _server.DisposeAsync();
        if (_ownedStoreDir is not null)
        {
            try
            {
                Directory.Delete(_ownedStoreDir, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }
}
