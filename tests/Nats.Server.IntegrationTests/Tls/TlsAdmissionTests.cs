using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Net;
using static Nats.Server.IntegrationTests.Tls.TlsServerPair;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// How the TLS port decides between TLS and plain text, as Go's createClient does: allow_non_tls and
/// connection_rate_limit compared with Go 2.9.10 (which has both), handshake_first's fallback delay
/// (Go 2.10.4, not in 2.9.10) with NATS.Net in both of its modes.
/// </summary>
public sealed class TlsAdmissionTests
{
    private const string Connect = "CONNECT {\"verbose\":false}\r\nPING\r\n";

    [Fact]
    public async Task Allow_non_tls_serves_plain_and_tls_clients_on_one_port_as_go()
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki, "", "allow_non_tls: true"));
        await using var _ = go;
        await using var __ = ours;
        var results = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            await using var plain = await TlsRawClient.ConnectPlainAsync(server.Port);
            var info = JsonDocument.Parse((await plain.ReadUntilAsync("\r\n"))[5..].Trim()).RootElement;
            var keys = string.Join(",", info.EnumerateObject().Select(p => p.Name));
            await plain.SendAsync(Connect + "SUB p 1\r\nPUB p 2\r\nhi\r\nPING\r\n");
            var plainTranscript = await plain.ReadUntilAsync("PONG\r\nMSG p 1 2\r\nhi\r\nPONG\r\n");
            await using var secure = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
            await secure.SendAsync(Connect);
            var secureTranscript = await secure.ReadUntilAsync("PONG\r\n");
            results.Add($"{keys}|{info.GetProperty("tls_available").GetBoolean()}|{plainTranscript}|{secureTranscript}");
        }
        Assert.Equal(results[0], results[1]);
        Assert.DoesNotContain("tls_required", results[1]);
    }

    [Fact]
    public async Task Connection_rate_limit_refuses_handshakes_over_the_limit_with_gos_error_and_log_line()
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki, "connection_rate_limit: 1"));
        await using var _ = go;
        await using var __ = ours;
        var refusals = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            // One handshake per second is allowed: of quick consecutive connections, a later one is refused.
            string? refusal = null;
            for (var attempt = 0; attempt < 20 && refusal is null; attempt++)
            {
                await using var client = await TlsRawClient.ConnectPlainAsync(server.Port);
                await client.ReadUntilAsync("\r\n");
                var rest = await client.ReadToCloseOrTimeoutAsync(TimeSpan.FromMilliseconds(300));
                if (rest.StartsWith("-ERR", StringComparison.Ordinal))
                {
                    refusal = rest;
                }
            }
            Assert.NotNull(refusal);
            refusals.Add(refusal!);
        }
        Assert.Equal(refusals[0], refusals[1]);
        Assert.Equal("-ERR 'Connection throttling is active. Please try again later.'\r\n", refusals[1]);
        Assert.Contains("connections due to TLS rate limiting", await ours.Log.WaitForAsync("due to TLS rate limiting"));
        Assert.Contains("Rejected", await GoLog.WaitForAsync(go, "due to TLS rate limiting"));
        await ours.Log.WaitForAsync("Maximum Connections Exceeded");
    }

    [Theory]
    [InlineData(TlsMode.Implicit)]
    [InlineData(TlsMode.Require)]
    public async Task Handshake_first_with_a_fallback_delay_serves_tls_first_and_upgrading_clients(TlsMode mode)
    {
        using var pki = new TestPki();
        await using var server = await LoggedServer.StartAsync(Settings(pki, "handshake_first: \"300ms\""));
        var opts = new NatsOpts
        {
            Url = $"nats://127.0.0.1:{server.Port}",
            // Implicit starts TLS at once; Require waits for INFO, which comes in plain text after the delay.
            TlsOpts = new NatsTlsOpts { CaFile = pki.CaFile, Mode = mode },
        };
        await using var nats = new NatsClient(opts);
        await nats.ConnectAsync();
        Assert.True(nats.Connection.ServerInfo!.TlsRequired);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await using var sub = await nats.Connection.SubscribeCoreAsync<string>("first.fallback", cancellationToken: cts.Token);
        await nats.Connection.PingAsync(cts.Token);
        await nats.PublishAsync("first.fallback", "hello", cancellationToken: cts.Token);
        Assert.Equal("hello", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        await server.Log.WaitForAsync("TLS handshake complete");
    }

    [Fact]
    public async Task Handshake_first_fallback_sends_plain_info_to_a_silent_client()
    {
        using var pki = new TestPki();
        await using var server = await LoggedServer.StartAsync(Settings(pki, "handshake_first: \"200ms\""));
        // Says nothing: after the delay INFO arrives in plain text, then the usual upgrade works.
        await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
        Assert.StartsWith("INFO {", client.Info);
        Assert.Contains("\"tls_required\":true", client.Info);
        await client.SendAsync(Connect);
        Assert.Contains("PONG", await client.ReadUntilAsync("PONG\r\n"));
    }
}
