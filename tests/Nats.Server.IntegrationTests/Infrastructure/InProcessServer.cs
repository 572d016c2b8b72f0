using Nats.Server.Embedding;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>Our server hosted inside the test process through the public embedding API, bound to a port the OS picks.</summary>
internal sealed class InProcessServer : ITestServer
{
    private readonly NatsServerHost _host;

    private InProcessServer(NatsServerHost host)
    {
        _host = host;
        Port = host.Port;
    }

    public string Kind => "ours";

    public int Port { get; }

    /// <summary>Starts with the settings' options; a failed start releases whatever it bound before throwing.</summary>
    public static async Task<InProcessServer> StartAsync(ServerSettings settings) =>
        new(await NatsServerHost.StartAsync(new NatsServerHostOptions { Options = settings.ToServerOptions() }));

    public async ValueTask DisposeAsync() => await _host.DisposeAsync();
}
