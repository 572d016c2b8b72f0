using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.LeafNodes;
using static Nats.Server.IntegrationTests.Tls.TlsServerPair;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// <c>tls { pinned_certs }</c> on the client port, against Go 2.9.10: after the handshake the client's certificate must have
/// its SubjectPublicKeyInfo's SHA-256 in the set, otherwise the connection is closed with Go's log line.
/// </summary>
public sealed class TlsPinnedCertsTests
{
    private static async Task<string> LogLineAsync(ITestServer server, string text) => server switch
    {
        GoServerProcess go => GoLog.WithoutClient(await GoLog.WaitForAsync(go, text)),
        LoggedServer ours => GoLog.WithoutClient(await ours.Log.WaitForAsync(text)),
        _ => throw new ArgumentException("unknown server"),
    };

    private const string Script = "CONNECT {\"verbose\":false}\r\nPING\r\n";

    [Fact]
    public async Task A_pinned_client_gets_in_and_another_is_refused_as_go()
    {
        using var pki = new TestPki();
        var alice = pki.IssueClient("alice", "CN=alice");
        var stranger = pki.IssueClient("stranger", "CN=stranger");
        var (go, ours) = await StartBothAsync(Settings(pki, $"verify: true\n  pinned_certs: [\"{LeafPinnedCertsTests.KeyId(alice.CertFile)}\"]"));
        await using var _ = go;
        await using var __ = ours;
        var transcripts = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            var run = new List<string>();
            foreach (var (cert, key) in new[] { alice, stranger })
            {
                using var certificate = TestPki.Load(cert, key);
                try
                {
                    await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate, certificate);
                    await client.SendAsync(Script);
                    run.Add((await client.ReadToCloseOrPongAsync()).Contains("PONG\r\n", StringComparison.Ordinal) ? "PONG" : "closed");
                }
                catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException)
                {
                    run.Add("closed");
                }
            }
            run.Add(await LogLineAsync(server, "TLS handshake error"));
            transcripts.Add(string.Join("\n", run));
        }
        Assert.Equal("PONG\nclosed\n[ERR] TLS handshake error: certificate not pinned", transcripts[0]);
        Assert.Equal(transcripts[0], transcripts[1]);
    }

    [Fact]
    public async Task Pins_without_verify_refuse_every_client_as_go()
    {
        using var pki = new TestPki();
        var alice = pki.IssueClient("alice", "CN=alice");
        var (go, ours) = await StartBothAsync(Settings(pki, $"pinned_certs: [\"{LeafPinnedCertsTests.KeyId(alice.CertFile)}\"]"));
        await using var _ = go;
        await using var __ = ours;
        var lines = new List<string>();
        foreach (ITestServer server in new ITestServer[] { go, ours })
        {
            using var certificate = TestPki.Load(alice.CertFile, alice.KeyFile);
            try
            {
                await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate, certificate);
                await client.SendAsync(Script);
                Assert.DoesNotContain("PONG\r\n", await client.ReadToCloseOrPongAsync());
            }
            catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException)
            {
            }
            lines.Add(await LogLineAsync(server, "TLS handshake error"));
        }
        Assert.Equal("[ERR] TLS handshake error: certificate not pinned", lines[0]);
        Assert.Equal(lines[0], lines[1]);
    }
}
