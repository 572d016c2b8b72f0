using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Core;

/// <summary>One in-process server per test, on a free loopback port, stopped by its own handle.</summary>
internal sealed class TestServer : IAsyncDisposable
{
    private TestServer(NatsServer server)
    {
        Server = server;
    }

    public NatsServer Server { get; }

    public int Port => Server.Port;

    public static async Task<TestServer> StartAsync(Action<ServerOptions>? configure = null)
    {
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        configure?.Invoke(options);
        var server = new NatsServer(options);
        await server.StartAsync();
        return new TestServer(server);
    }

    public ValueTask DisposeAsync() => Server.DisposeAsync();
}
