using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using static Nats.Server.IntegrationTests.Tls.TlsServerPair;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// The same TLS configuration and the same bytes to the Go server 2.9.10 and to ours: INFO fields,
/// messages over TLS, the plain-text client, broken handshakes, client certificates and
/// verify_and_map must get the same answers and the same log lines.
/// </summary>
public sealed class TlsDifferentialTests
{
    private static async Task<string> LogLineAsync(ITestServer server, string text) => server switch
    {
        GoServerProcess go => GoLog.WithoutClient(await GoLog.WaitForAsync(go, text)),
        LoggedServer ours => GoLog.WithoutClient(await ours.Log.WaitForAsync(text)),
        _ => throw new ArgumentException("unknown server"),
    };

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Info_is_plain_text_with_tls_required_and_verify_as_go(bool verify)
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki, verify ? "verify: true" : ""));
        await using var _ = go;
        await using var __ = ours;
        var infos = new List<JsonElement>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            await using var client = await TlsRawClient.ConnectPlainAsync(server.Port);
            var line = await client.ReadUntilAsync("\r\n");
            Assert.StartsWith("INFO {", line);
            infos.Add(JsonDocument.Parse(line[5..].Trim()).RootElement.Clone());
        }
        var goKeys = infos[0].EnumerateObject().Select(p => p.Name).ToList();
        var ourKeys = infos[1].EnumerateObject().Select(p => p.Name).ToList();
        Assert.Equal(goKeys, ourKeys);
        Assert.True(infos[1].GetProperty("tls_required").GetBoolean());
        Assert.Equal(verify, infos[1].TryGetProperty("tls_verify", out var v) && v.GetBoolean());
        Assert.Equal(infos[0].TryGetProperty("tls_verify", out var gv) && gv.GetBoolean(), verify);
    }

    [Fact]
    public async Task Messages_flow_over_tls_as_with_go()
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki));
        await using var _ = go;
        await using var __ = ours;
        var transcripts = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
            await client.SendAsync("CONNECT {\"verbose\":true,\"headers\":true,\"no_responders\":true}\r\nSUB a.* 1\r\nPUB a.b r 5\r\nhello\r\nHPUB a.c 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPUB bad.subject.* 1\r\nx\r\nPING\r\n");
            transcripts.Add(await client.ReadUntilAsync("PONG\r\n"));
        }
        Assert.Equal(transcripts[0], transcripts[1]);
        Assert.Contains("MSG a.b 1 r 5\r\nhello", transcripts[1]);
    }

    [Fact]
    public async Task Plain_text_client_on_tls_port_is_closed_with_gos_log_line()
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki));
        await using var _ = go;
        await using var __ = ours;
        var lines = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            await using var client = await TlsRawClient.ConnectPlainAsync(server.Port);
            await client.ReadUntilAsync("\r\n");
            await client.SendAsync("CONNECT {}\r\nPING\r\n");
            // Nothing after INFO: the connection is simply closed.
            Assert.Equal("", await client.ReadToCloseAsync());
            lines.Add(await LogLineAsync(server, "TLS handshake error"));
        }
        Assert.Equal("[ERR] TLS handshake error: tls: first record does not look like a TLS handshake", lines[1]);
        Assert.Equal(lines[0], lines[1]);
        await ours.Log.WaitForAsync("Client connection closed: TLS Handshake Failure");
    }

    public static TheoryData<string, byte[], string> BadHandshakes() => new()
    {
        { "non-handshake-record", [0x17, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5], "TLS handshake error: tls: first record does not look like a TLS handshake" },
        { "truncated-hello", [0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00, 0x00, 0x3c, 0x03, 0x03], "i/o timeout" },
        { "never-starts", [], "i/o timeout" },
    };

    [Theory]
    [MemberData(nameof(BadHandshakes))]
    public async Task Broken_handshake_closes_only_that_connection_with_gos_log_lines(string name, byte[] bytes, string expected)
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki, "timeout: 1"));
        await using var _ = go;
        await using var __ = ours;
        var lines = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            // A healthy TLS client connected before keeps working after the bad one is cut.
            await using var healthy = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
            await healthy.SendAsync("CONNECT {}\r\nPING\r\n");
            await healthy.ReadUntilAsync("PONG\r\n");

            await using var bad = await TlsRawClient.ConnectPlainAsync(server.Port);
            await bad.ReadUntilAsync("\r\n");
            if (bytes.Length > 0)
            {
                await bad.SendRawAsync(bytes);
            }
            Assert.Equal("", await bad.ReadToCloseAsync());
            lines.Add(await LogLineAsync(server, "TLS handshake error"));

            await healthy.SendAsync("PING\r\n");
            Assert.Equal("PONG\r\n", await healthy.ReadUntilAsync("PONG\r\n"));
        }
        Assert.True(lines[0] == lines[1], $"{name}: go logged [{lines[0]}], we logged [{lines[1]}]");
        Assert.EndsWith(expected, lines[1]);
        if (expected == "i/o timeout")
        {
            // Go's timer adds this line too, unless its read deadline closed the connection first (a race we always lose the same way).
            await ours.Log.WaitForAsync("TLS handshake timeout");
        }
    }

    [Fact]
    public async Task Verify_refuses_a_client_without_certificate_as_go()
    {
        using var pki = new TestPki();
        var (go, ours) = await StartBothAsync(Settings(pki, "verify: true"));
        await using var _ = go;
        await using var __ = ours;
        var lines = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            try
            {
                await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
                // With TLS 1.3 the client may finish first; the server's refusal then ends the stream.
                await client.SendAsync("CONNECT {}\r\nPING\r\n");
                Assert.DoesNotContain("PONG", await client.ReadToCloseAsync());
            }
            catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException)
            {
            }
            lines.Add(await LogLineAsync(server, "TLS handshake error"));
        }
        Assert.Equal(lines[0], lines[1]);
    }

    [Fact]
    public async Task Verify_and_map_binds_the_certificate_user_and_its_permissions_as_go()
    {
        using var pki = new TestPki();
        var alice = pki.IssueClient("alice", "CN=alice, OU=eng, O=Acme");
        var bob = pki.IssueClient("bob", "CN=bob", email: "bob@example.com");
        var stranger = pki.IssueClient("stranger", "CN=stranger");
        var settings = Settings(pki, "verify_and_map: true",
            "authorization { users: [ {user: \"CN=alice,OU=eng,O=Acme\", permissions: {publish: {allow: [\"allowed.>\", \"_INBOX.>\"]}, subscribe: {deny: [\"secret.>\"]}}}, {user: \"bob@example.com\"} ] }");
        var (go, ours) = await StartBothAsync(settings);
        await using var _ = go;
        await using var __ = ours;
        const string script = "CONNECT {\"verbose\":false}\r\nSUB secret.x 1\r\nSUB allowed.> 2\r\nPUB denied.x 1\r\nx\r\nPUB allowed.y 1\r\ny\r\nPING\r\n";
        var transcripts = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            var run = new List<string>();
            foreach (var (cert, key) in new[] { alice, bob, stranger })
            {
                using var certificate = TestPki.Load(cert, key);
                await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate, certificate);
                await client.SendAsync(script);
                run.Add(await client.ReadToCloseOrPongAsync());
            }
            transcripts.Add(string.Join("\n--\n", run));
        }
        Assert.Equal(transcripts[0], transcripts[1]);
        Assert.Contains("Permissions Violation for Publish to \"denied.x\"", transcripts[1]);
        Assert.Contains("Authorization Violation", transcripts[1]);
    }
}

internal static class TlsRawClientExtensions
{
    /// <summary>Everything up to PONG, or up to the close when the server refuses the client.</summary>
    public static async Task<string> ReadToCloseOrPongAsync(this TlsRawClient client)
    {
        try
        {
            return await client.ReadUntilAsync("PONG\r\n");
        }
        catch (IOException e)
        {
            return e.Message;
        }
    }
}
