using Nats.Server.Configuration;
using Nats.Server.Embedding;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Core;

/// <summary>One in-process server per test (the public embedding API), on a free loopback port, stopped by its own handle.</summary>
internal sealed class TestServer : IAsyncDisposable
{
    private TestServer(NatsServerHost host)
    {
        Host = host;
        Server = host.Server!;
        Port = host.Port;
    }

    public NatsServerHost Host { get; }

    /// <summary>The server behind the host, for assertions on internal state.</summary>
    public NatsServer Server { get; }

    public int Port { get; }

    public static async Task<TestServer> StartAsync(Action<ServerOptions>? configure = null)
    {
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        configure?.Invoke(options);
        return new TestServer(await NatsServerHost.StartAsync(new NatsServerHostOptions { Options = options }));
    }

    public ValueTask DisposeAsync() => Host.DisposeAsync();
}
