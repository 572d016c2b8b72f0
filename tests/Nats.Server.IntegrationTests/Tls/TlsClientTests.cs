using System.Diagnostics;
using System.Net.Http;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JsClient;
using NATS.Client.Core;
using NATS.Net;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>Real clients over TLS: nats.js v3 and NATS.Net 3.3.2, openssl s_client, /connz and the HTTPS monitor.</summary>
public sealed class TlsClientTests
{
    private const string MapUsers =
        "authorization { users: [ {user: \"CN=alice,OU=eng\", permissions: {publish: {allow: [\"allowed.>\", \"_INBOX.>\"]}, subscribe: {deny: [\"secret.>\"]}}} ] }";

    private static ServerSettings Settings(TestPki pki, string extraTls = "", params string[] more)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add(pki.ServerTlsBlock(extraTls));
        settings.RawConfig.AddRange(more);
        return settings;
    }

    [Fact]
    public async Task NatsJs_publishes_and_subscribes_over_tls()
    {
        using var pki = new TestPki();
        await using var server = await TestServers.StartOursAsync(Settings(pki));
        var result = await NodeRunner.RunScenariosAsync(server.Url, "tls", pki.CaFile);
        Assert.True(result.ExitCode == 0, result.Output);
    }

    [Fact]
    public async Task NatsJs_with_a_client_certificate_passes_verify()
    {
        using var pki = new TestPki();
        var (cert, key) = pki.IssueClient("js", "CN=js-client");
        await using var server = await TestServers.StartOursAsync(Settings(pki, "verify: true"));
        var result = await NodeRunner.RunScenariosAsync(server.Url, "tls", pki.CaFile, cert, key);
        Assert.True(result.ExitCode == 0, result.Output);
    }

    [Fact]
    public async Task NatsJs_verify_and_map_gets_the_mapped_users_permissions()
    {
        using var pki = new TestPki();
        var (cert, key) = pki.IssueClient("alice", "CN=alice, OU=eng");
        await using var server = await TestServers.StartOursAsync(Settings(pki, "verify_and_map: true", MapUsers));
        var result = await NodeRunner.RunScenariosAsync(server.Url, "tlsmap", pki.CaFile, cert, key);
        Assert.True(result.ExitCode == 0, result.Output);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task NatsNet_publishes_and_subscribes_over_tls(bool handshakeFirst)
    {
        using var pki = new TestPki();
        var (cert, key) = pki.IssueClient("dotnet", "CN=dotnet-client");
        await using var server = await LoggedServer.StartAsync(Settings(pki, "verify: true" + (handshakeFirst ? "\n  handshake_first: true" : "")));
        var opts = new NatsOpts
        {
            Url = $"nats://127.0.0.1:{server.Port}",
            TlsOpts = new NatsTlsOpts
            {
                CaFile = pki.CaFile,
                CertFile = cert,
                KeyFile = key,
                // Implicit is NATS.Net's TLS-first mode (handshake_first on the server).
                Mode = handshakeFirst ? TlsMode.Implicit : TlsMode.Require,
            },
        };
        await using var nats = new NatsClient(opts);
        await nats.ConnectAsync();
        Assert.True(nats.Connection.ServerInfo!.TlsRequired);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await using var sub = await nats.Connection.SubscribeCoreAsync<string>("net.tls", cancellationToken: cts.Token);
        await nats.Connection.PingAsync(cts.Token);
        for (var i = 0; i < 100; i++)
        {
            await nats.PublishAsync("net.tls", $"m{i}", cancellationToken: cts.Token);
        }
        var received = new List<string>();
        while (received.Count < 100)
        {
            received.Add((await sub.Msgs.ReadAsync(cts.Token)).Data!);
        }
        Assert.Equal(100, received.Count);
        Assert.Equal("m99", received[^1]);
        await server.Log.WaitForAsync("TLS handshake complete");
    }

    [Fact]
    public async Task Openssl_s_client_completes_the_handshake_first_handshake_and_talks_nats()
    {
        using var pki = new TestPki();
        await using var server = await LoggedServer.StartAsync(Settings(pki, "handshake_first: true"));
        var psi = new ProcessStartInfo("openssl")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var arg in new[] { "s_client", "-connect", $"127.0.0.1:{server.Port}", "-CAfile", pki.CaFile, "-verify_return_error", "-quiet", "-servername", "localhost" })
        {
            psi.ArgumentList.Add(arg);
        }
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput;
        var info = await ReadLineAsync(stdout);
        Assert.StartsWith("INFO {", info);
        Assert.Contains("\"tls_required\":true", info);
        await process.StandardInput.WriteAsync("CONNECT {\"verbose\":false}\r\nSUB s 1\r\nPUB s 2\r\nok\r\nPING\r\n");
        await process.StandardInput.FlushAsync();
        Assert.Equal("MSG s 1 2", await ReadLineAsync(stdout));
        Assert.Equal("ok", await ReadLineAsync(stdout));
        Assert.Equal("PONG", await ReadLineAsync(stdout));
        // s_client keeps the session open after stdin ends; it is our child, stop it by its handle.
        process.Kill();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(20));
    }

    [Fact]
    public async Task Connz_shows_tls_version_and_cipher_and_https_monitor_serves_varz()
    {
        using var pki = new TestPki();
        await using var server = await LoggedServer.StartAsync(Settings(pki, "", "https: \"127.0.0.1:-1\""));
        await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
        await client.SendAsync("CONNECT {}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        var expectedCipher = client.Ssl!.NegotiatedCipherSuite.ToString();

        using var handler = new HttpClientHandler
        {
            ServerCertificateCustomValidationCallback = (_, cert, _, _) =>
            {
                using var chain = new X509Chain();
                chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
                chain.ChainPolicy.CustomTrustStore.Add(pki.CaCertificate);
                chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
                return cert is not null && chain.Build(cert);
            },
        };
        using var http = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(30) };
        var baseUrl = $"https://localhost:{server.Server.MonitoringPort}";
        using var connz = JsonDocument.Parse(await http.GetStringAsync($"{baseUrl}/connz"));
        var conn = connz.RootElement.GetProperty("connections")[0];
        Assert.Equal("1.3", conn.GetProperty("tls_version").GetString());
        Assert.Equal(expectedCipher, conn.GetProperty("tls_cipher_suite").GetString());
        using var varz = JsonDocument.Parse(await http.GetStringAsync($"{baseUrl}/varz"));
        Assert.True(varz.RootElement.GetProperty("tls_required").GetBoolean());
        Assert.Equal(3.0, varz.RootElement.GetProperty("auth_timeout").GetDouble());
        Assert.Equal(2.0, varz.RootElement.GetProperty("tls_timeout").GetDouble());
        Assert.NotEqual(0, varz.RootElement.GetProperty("https_port").GetInt32());
    }

    private static async Task<string> ReadLineAsync(StreamReader reader)
    {
        var line = await reader.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(20));
        return (line ?? throw new IOException("openssl closed the stream")).TrimEnd('\r');
    }
}
