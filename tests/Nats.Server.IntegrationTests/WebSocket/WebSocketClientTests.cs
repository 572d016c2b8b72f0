using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JsClient;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;
using NATS.Net;

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

/// <summary>wss://: the websocket block's own tls {} (Kestrel HTTPS) with the SDK's ClientWebSocket trusting only the test CA.</summary>
public sealed class SecureWebSocketTests
{
    [Fact]
    public async Task Wss_upgrade_over_tls_carries_the_nats_protocol()
    {
        using var pki = new TestPki();
        var settings = new ServerSettings();
        settings.RawConfig.Add($"websocket {{\n  port: -1\n  {pki.ServerTlsBlock()}\n}}");
        await using var server = await LoggedServer.StartAsync(settings);
        using var ws = new System.Net.WebSockets.ClientWebSocket();
        ws.Options.RemoteCertificateValidationCallback = (_, cert, _, _) =>
        {
            using var chain = new System.Security.Cryptography.X509Certificates.X509Chain();
            chain.ChainPolicy.TrustMode = System.Security.Cryptography.X509Certificates.X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.Add(pki.CaCertificate);
            chain.ChainPolicy.RevocationMode = System.Security.Cryptography.X509Certificates.X509RevocationMode.NoCheck;
            return cert is not null && chain.Build(new System.Security.Cryptography.X509Certificates.X509Certificate2(cert));
        };
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await ws.ConnectAsync(new Uri($"wss://localhost:{server.Server.WebSocketPort}/"), cts.Token);
        await ws.SendAsync("CONNECT {\"verbose\":false}\r\nSUB s 1\r\nPUB s 3\r\nwss\r\nPING\r\n"u8.ToArray(), System.Net.WebSockets.WebSocketMessageType.Binary, true, cts.Token);
        var text = new System.Text.StringBuilder();
        var buffer = new byte[4096];
        while (!text.ToString().Contains("PONG\r\n", StringComparison.Ordinal))
        {
            var result = await ws.ReceiveAsync(buffer, cts.Token);
            text.Append(System.Text.Encoding.UTF8.GetString(buffer, 0, result.Count));
        }
        Assert.StartsWith("INFO {", text.ToString());
        Assert.Contains("MSG s 1 3\r\nwss\r\nPONG\r\n", text.ToString());
        await server.Log.WaitForAsync("Listening for websocket clients on wss://");
    }
}
