using NATS.Client.Core;
using NATS.Net;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JsClient;
using Nats.Server.IntegrationTests.Tls;

namespace Nats.Server.IntegrationTests.WebSocket;

/// <summary>Real clients over WebSocket: nats.js's wsconnect, NATS.Net 3.3.2, and nats.js in headless Chromium.</summary>
public sealed class WebSocketClientTests
{
    private static ServerSettings Settings(string block = "no_tls: true", params string[] more)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add($"websocket {{\n  port: -1\n  {block}\n}}");
        settings.RawConfig.AddRange(more);
        return settings;
    }

    [Theory]
    [InlineData("no_tls: true")]
    [InlineData("no_tls: true\n  compression: true")]
    public async Task NatsJs_wsconnect_pubsub_headers_and_request(string block)
    {
        await using var server = await LoggedServer.StartAsync(Settings(block));
        var result = await NodeRunner.RunScenariosAsync($"ws://127.0.0.1:{server.Server.WebSocketPort}", "ws");
        Assert.True(result.ExitCode == 0, result.Output);
    }

    [Fact]
    public async Task NatsNet_over_websocket_with_the_blocks_own_token()
    {
        await using var server = await LoggedServer.StartAsync(Settings("no_tls: true\n  authorization { token: \"ws-secret\" }"));
        await using var nats = new NatsClient(new NatsOpts
        {
            Url = $"ws://127.0.0.1:{server.Server.WebSocketPort}",
            AuthOpts = new NatsAuthOpts { Token = "ws-secret" },
        });
        await nats.ConnectAsync();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await using var sub = await nats.Connection.SubscribeCoreAsync<string>("net.ws", cancellationToken: cts.Token);
        await nats.Connection.PingAsync(cts.Token);
        for (var i = 0; i < 50; i++)
        {
            await nats.PublishAsync("net.ws", $"m{i}", cancellationToken: cts.Token);
        }
        for (var i = 0; i < 50; i++)
        {
            Assert.Equal($"m{i}", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        }
        // The websocket token does not open the client port, whose authorization is unchanged (none).
        Assert.Equal(1, server.Server.ClientCount);

        await using var wrong = new NatsClient(new NatsOpts
        {
            Url = $"ws://127.0.0.1:{server.Server.WebSocketPort}",
            AuthOpts = new NatsAuthOpts { Token = "nope" },
            MaxReconnectRetry = 0,
        });
        await Assert.ThrowsAnyAsync<NatsException>(async () => await wrong.ConnectAsync());
    }

    [Fact]
    public async Task Websocket_clients_are_listed_in_connz_and_counted_in_varz()
    {
        await using var server = await LoggedServer.StartAsync(Settings());
        await using var nats = new NatsClient(new NatsOpts { Url = $"ws://127.0.0.1:{server.Server.WebSocketPort}", Name = "ws-client" });
        await nats.ConnectAsync();
        await nats.Connection.PingAsync();
        var varz = server.Server.Documents.Varz();
        Assert.Equal(1, varz.Connections);
        Assert.Equal(server.Server.WebSocketPort, varz.Websocket.Port);
        Assert.True(varz.Websocket.NoTls);
        Assert.Contains(server.Server.Clients, c => c.Name == "ws-client");
    }

    [Fact]
    public async Task Headless_chromium_page_with_nats_js_connects_subscribes_and_receives()
    {
        await using var server = await LoggedServer.StartAsync(Settings());
        await using var page = await BrowserPage.StartAsync();
        var report = await page.RunChromiumAsync($"server=ws://127.0.0.1:{server.Server.WebSocketPort}", TimeSpan.FromSeconds(90));
        Assert.Equal("OK browser.hello hello from chromium", report);
        await server.Log.WaitForAsync("Client connection created");
    }
}
