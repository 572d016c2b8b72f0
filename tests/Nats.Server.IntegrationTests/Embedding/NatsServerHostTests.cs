using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Embedding;
using Nats.Server.Hosting;
using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.Embedding;

/// <summary>The embedding API: start, readiness by event, the chosen port, config files, stop, and the hosted service.</summary>
public sealed class NatsServerHostTests
{
    [Fact]
    public async Task Defaults_ListenOnLoopback_OnAFreePort_AndServeClients()
    {
        await using var server = await NatsServerHost.StartAsync();
        Assert.True(server.IsReady);
        Assert.NotEqual(0, server.Port);
        Assert.Equal($"nats://127.0.0.1:{server.Port}", server.ClientUrl);
        Assert.Null(server.MonitoringUrl);

        await using var client = await RawClient.ConnectAsync(server.Port);
        var info = await client.ConnectAndReadInfoAsync();
        using var json = JsonDocument.Parse(info[5..info.IndexOf('\r')]);
        Assert.Equal(server.ServerId, json.RootElement.GetProperty("server_id").GetString());
        await client.SendAsync("SUB s 1\r\nPUB s 2\r\nhi\r\n");
        Assert.Contains("MSG s 1 2\r\nhi\r\n", await client.ReadUntilAsync("hi\r\n"));
    }

    [Fact]
    public async Task ReadyEvent_IsRaisedOnce_BeforeStartReturns()
    {
        var server = new NatsServerHost(new NatsServerHostOptions { ServerName = "embedded-ready" });
        var raised = 0;
        var portAtEvent = 0;
        server.Ready += (sender, _) =>
        {
            raised++;
            portAtEvent = ((NatsServerHost)sender!).Port;
        };
        var waiting = server.WaitUntilReadyAsync();
        Assert.False(waiting.IsCompleted);

        await server.StartAsync();
        await waiting;
        Assert.Equal(1, raised);
        Assert.Equal(server.Port, portAtEvent);
        Assert.Equal("embedded-ready", server.ServerName);

        await server.DisposeAsync();
        Assert.False(server.IsReady);
        Assert.Throws<InvalidOperationException>(() => server.Port);
        await server.DisposeAsync();
        await Assert.ThrowsAsync<InvalidOperationException>(() => server.StartAsync());
    }

    [Fact]
    public async Task Stop_ClosesClients_AndReleasesThePort()
    {
        var server = await NatsServerHost.StartAsync();
        var port = server.Port;
        await using var client = await RawClient.ConnectAsync(port);
        await client.ConnectAndReadInfoAsync();
        await client.SyncAsync();

        await server.StopAsync();
        await client.ReadToEndAsync();
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await Assert.ThrowsAnyAsync<SocketException>(async () => await probe.ConnectAsync(IPAddress.Loopback, port));
    }

    [Fact]
    public async Task ConfigFile_IsRead_AndExplicitPropertiesWin()
    {
        var dir = Directory.CreateTempSubdirectory("nats-embed-");
        try
        {
            var file = Path.Combine(dir.FullName, "server.conf");
            await File.WriteAllTextAsync(file, """
                port: 1
                server_name: from-file
                authorization { user: alice, password: secret }
                """);
            await using var server = await NatsServerHost.StartAsync(new NatsServerHostOptions
            {
                ConfigFile = file,
                Host = "127.0.0.1",
                Port = 0,
                EnableMonitoring = true,
            });
            Assert.NotEqual(1, server.Port);
            Assert.Equal("from-file", server.ServerName);
            Assert.Equal($"http://127.0.0.1:{server.MonitoringPort}", server.MonitoringUrl);

            await using var denied = await RawClient.ConnectAsync(server.Port);
            await denied.ConnectAndReadInfoAsync("""{"verbose":false,"user":"alice","pass":"wrong"}""");
            Assert.Contains("-ERR 'Authorization Violation'", await denied.ReadToEndAsync());
            await using var allowed = await RawClient.ConnectAsync(server.Port);
            await allowed.ConnectAndReadInfoAsync("""{"verbose":false,"user":"alice","pass":"secret"}""");
            Assert.Contains("PONG", await allowed.SyncAsync());

            using var http = new HttpClient();
            var healthz = await http.GetStringAsync(server.MonitoringUrl + "/healthz");
            Assert.Equal("""{"status":"ok"}""", healthz);
        }
        finally
        {
            dir.Delete(recursive: true);
        }
    }

    [Fact]
    public async Task InvalidSettings_FailStart_AndFaultReadiness()
    {
        var server = new NatsServerHost(new NatsServerHostOptions { Configure = o => o.MaxPayload = (int)Math.Min(int.MaxValue, o.MaxPending + 1) });
        var ready = server.WaitUntilReadyAsync();
        await Assert.ThrowsAsync<ConfigurationException>(() => server.StartAsync());
        await Assert.ThrowsAsync<ConfigurationException>(() => ready);
        await server.DisposeAsync();

        using var blocker = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        blocker.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        blocker.Listen();
        var busy = ((IPEndPoint)blocker.LocalEndPoint!).Port;
        // Go's fatal line as the message, the socket error inside.
        var failed = await Assert.ThrowsAsync<ListenFailedException>(() => NatsServerHost.StartAsync(new NatsServerHostOptions { Port = busy }));
        Assert.Equal(SocketError.AddressAlreadyInUse, Assert.IsType<SocketException>(failed.InnerException).SocketErrorCode);
        Assert.Contains("bind: address already in use", failed.Message);
    }

    [Fact]
    public async Task HostedService_StartsWithTheHost_LogsThroughItsLoggerFactory_AndStopsWithIt()
    {
        var logs = new CapturingLoggerProvider();
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Logging.AddProvider(logs);
        builder.Services.AddNatsServer(o => o.ServerName = "hosted");
        builder.Services.AddNatsServer(o => o.EnableMonitoring = true);
        using var host = builder.Build();
        var server = host.Services.GetRequiredService<NatsServerHost>();
        Assert.False(server.IsReady);

        await host.StartAsync();
        await server.WaitUntilReadyAsync();
        Assert.Equal("hosted", server.ServerName);
        Assert.NotNull(server.MonitoringUrl);
        Assert.Contains(logs.Lines, line => line == "Server is ready");
        await using (var client = await RawClient.ConnectAsync(server.Port))
        {
            await client.ConnectAndReadInfoAsync();
            Assert.Contains("PONG", await client.SyncAsync());
        }

        await host.StopAsync();
        Assert.False(server.IsReady);
        Assert.Contains(logs.Lines, line => line == "Server Exiting..");
    }

    private sealed class CapturingLoggerProvider : ILoggerProvider, ILogger
    {
        private readonly List<string> _lines = [];

        public IReadOnlyList<string> Lines
        {
            get
            {
                lock (_lines)
                {
                    return _lines.ToList();
                }
            }
        }

        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            lock (_lines)
            {
                _lines.Add(formatter(state, exception));
            }
        }

        public void Dispose()
        {
        }
    }
}
