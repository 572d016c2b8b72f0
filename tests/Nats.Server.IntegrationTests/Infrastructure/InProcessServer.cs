using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>Our server hosted inside the test process, bound to a port the OS picks.</summary>
internal sealed class InProcessServer : ITestServer
{
    private readonly NatsServer _server;

    private InProcessServer(NatsServer server) => _server = server;

    public string Kind => "ours";

    public int Port => _server.Port;

    public static async Task<InProcessServer> StartAsync(ServerSettings settings)
    {
        var server = new NatsServer(settings.ToServerOptions());
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

        return new InProcessServer(server);
    }

    public async ValueTask DisposeAsync() => await _server.DisposeAsync();
}
