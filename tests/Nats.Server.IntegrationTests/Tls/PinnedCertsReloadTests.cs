using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.LeafNodes;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// Reloading <c>pinned_certs</c> as Go 2.9.10 does (reload.go's recheckPinnedCerts), the reloaded server Go's and ours:
/// a changed cluster set closes the routes whose certificate it no longer holds; a changed client-port set logs
/// "Reloaded: N pinned_certs" and checks the clients against the set in force before the reload (Go's code), so a client
/// goes only once a later reload drops the set it was admitted under; a changed leafnodes set is refused.
/// </summary>
public sealed class PinnedCertsReloadTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);
    private static readonly HttpClient Http = new();

    public static TheoryData<string> Kinds => new() { "go", "ours" };

    private static string Pins(params string[] certFiles) =>
        $"pinned_certs: [{string.Join(", ", certFiles.Select(f => $"\"{LeafPinnedCertsTests.KeyId(f)}\""))}]";

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_changed_cluster_set_closes_routes_no_longer_pinned(string kind)
    {
        using var pki = new TestPki();
        var (portA, portB) = (FreePorts.Next(), FreePorts.Next());
        var peerTls = pki.PeerTlsBlock("b");
        var other = pki.IssuePeer("other");
        var (certA, keyA) = pki.IssuePeer("a");
        string Config(string pins) =>
            $"http: \"127.0.0.1:-1\"\nserver_name: a\ncluster {{\n  name: C\n  listen: \"127.0.0.1:{portA}\"\n"
            + $"  tls {{\n    cert_file: \"{certA}\"\n    key_file: \"{keyA}\"\n    ca_file: \"{pki.CaFile}\"\n    timeout: 10\n    {pins}\n  }}\n}}\n";
        await using var server = await OpsServer.StartAsync(kind, Config(Pins(Path.Combine(pki.Directory, "b-cert.pem"))));
        await using var peer = await OpsServer.StartAsync("go",
            $"http: \"127.0.0.1:-1\"\nserver_name: b\ncluster {{\n  name: C\n  listen: \"127.0.0.1:{portB}\"\n  routes: [\"nats-route://localhost:{portA}\"]\n{peerTls}\n}}\n");
        await WaitForRoutesAsync(server, 1);

        var from = server.Log.Count;
        Assert.Null(await server.ReloadAsync(Config(Pins(other.CertFile))));
        await server.Log.WaitForAsync("Disconnect 1 clients due to pinned certs reload", from);
        // The peer dials again and is refused after each handshake.
        await server.Log.WaitForAsync(l => l.EndsWith("TLS route handshake error: certificate not pinned", StringComparison.Ordinal), from);
        await WaitForRoutesAsync(server, 0);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Client_port_clients_are_checked_against_the_set_before_the_reload(string kind)
    {
        using var pki = new TestPki();
        var alice = pki.IssueClient("alice", "CN=alice");
        var bob = pki.IssueClient("bob", "CN=bob");
        var carol = pki.IssueClient("carol", "CN=carol");
        string Config(string pins) => $"http: \"127.0.0.1:-1\"\n{pki.ServerTlsBlock("verify: true\n  " + pins)}\n";
        await using var server = await OpsServer.StartAsync(kind, Config(Pins(alice.CertFile, bob.CertFile)));
        using var aliceCert = TestPki.Load(alice.CertFile, alice.KeyFile);
        await using var client = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate, aliceCert);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");

        // Alice is no longer pinned, but Go checks her against the old set {alice, bob}: she stays.
        var from = server.Log.Count;
        Assert.Null(await server.ReloadAsync(Config(Pins(bob.CertFile))));
        await server.Log.WaitForAsync("Reloaded: 1 pinned_certs", from);
        await server.Log.WaitForAsync("Reloaded server configuration", from);
        await client.SendAsync("PING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        Assert.DoesNotContain(server.Log.Text.Split('\n').Skip(from), l => l.Contains("due to pinned certs reload", StringComparison.Ordinal));

        // Now the old set is {bob}: she goes.
        from = server.Log.Count;
        Assert.Null(await server.ReloadAsync(Config(Pins(carol.CertFile))));
        await server.Log.WaitForAsync("Disconnect 1 clients due to pinned certs reload", from);
        Assert.DoesNotContain("PONG\r\n", await client.ReadToCloseOrPongAsync());
    }

    [Fact]
    public async Task A_changed_leafnodes_set_is_refused_as_go()
    {
        var results = new List<string>();
        foreach (var kind in new[] { "go", "ours" })
        {
            using var pki = new TestPki();
            var spoke = pki.IssuePeer("spoke");
            var hubTls = pki.PeerTlsBlock("hub");
            var port = FreePorts.Next();
            string Config(string pins) =>
                $"leafnodes {{\n  listen: \"127.0.0.1:{port}\"\n{hubTls.Replace("timeout: 10", "timeout: 10\n  " + pins, StringComparison.Ordinal)}\n}}\n";
            await using var server = await OpsServer.StartAsync(kind, Config(""));
            var error = await server.ReloadAsync(Config(Pins(spoke.CertFile)));
            results.Add(error?.Split(':')[0] ?? "ok");
        }
        Assert.Equal("config reload not supported for LeafNode", results[0]);
        Assert.Equal(results[0], results[1]);
    }

    private static async Task WaitForRoutesAsync(OpsServer server, int count)
    {
        using var cts = new CancellationTokenSource(Deadline);
        while (true)
        {
            using var routez = JsonDocument.Parse(await Http.GetStringAsync($"http://127.0.0.1:{server.MonitorPort}/routez", cts.Token));
            if (routez.RootElement.GetProperty("num_routes").GetInt32() == count)
            {
                return;
            }
            await Task.Delay(50, cts.Token);
        }
    }
}
