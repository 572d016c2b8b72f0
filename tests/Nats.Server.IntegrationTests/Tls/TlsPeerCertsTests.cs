using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Server.IntegrationTests.Monitoring;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>/connz?auth=1 lists the client certificate (subject, SPKI and certificate SHA-256) as Go 2.9.10 does.</summary>
public sealed class TlsPeerCertsTests
{
    [Fact]
    public async Task Connz_auth_lists_the_client_certificate_as_go()
    {
        using var pki = new TestPki();
        var (certFile, keyFile) = pki.IssueClient("peer", "CN=peer-client, OU=ops, O=Acme");
        var config = pki.ServerTlsBlock("verify: true");
        var file = Path.Combine(pki.Directory, "peer.conf");
        await File.WriteAllTextAsync(file, config);
        await using var go = await GoMonitoredServer.StartAsync(file);
        await using var ours = await OurMonitoredServer.StartAsync(options =>
        {
            var result = ConfigBinder.Bind(options, ConfigParser.Parse(config, file));
            Assert.Empty(result.Errors);
        });
        var certificate = TestPki.Load(certFile, keyFile);
        var views = new List<string>();
        foreach (MonitoredServer server in new MonitoredServer[] { go, ours })
        {
            await using var client = await TlsRawClient.ConnectAsync(server.ClientPort, pki.CaCertificate, certificate);
            await client.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
            await client.ReadUntilAsync("PONG\r\n");
            var withAuth = (await server.GetJsonAsync("/connz?auth=1")).GetProperty("connections")[0];
            var withoutAuth = (await server.GetJsonAsync("/connz")).GetProperty("connections")[0];
            Assert.False(withoutAuth.TryGetProperty("tls_peer_certs", out _), server.Kind);
            views.Add(JsonSerializer.Serialize(withAuth.GetProperty("tls_peer_certs")));
        }
        Assert.Equal(views[0], views[1]);
        Assert.Contains("CN=peer-client", views[1]);
    }
}
