using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Routes over TLS (<c>cluster { tls {} }</c>) between real processes, Go 2.9.10 and ours in every pairing, with
/// certificates made by the test: as Go, the handshake comes first on a route (before INFO), both sides show a
/// certificate the CA must vouch for, and a peer of another authority is refused with Go's log line.
/// </summary>
public sealed class RouteTlsTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RouteOverTlsCarriesMessagesBothWays(string kindA, string kindB)
    {
        using var pki = new TestPki();
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec([kindA, kindB]) { ClusterConfigOf = s => pki.PeerTlsBlock($"route-{s.Name}") });
        var (a, b) = (cluster[0], cluster[1]);
        await using var onA = new NatsConnection(new NatsOpts { Url = a.Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = b.Url });
        await using var onBSub = await onB.SubscribeCoreAsync<string>("tls.>");
        await UntilReceivedAsync(onA, "tls.probe", onBSub);
        await onA.PublishAsync("tls.after", "secured");
        Assert.Equal("secured", (await NextAsync(onBSub, "tls.probe")).Data);
        await using var onASub = await onA.SubscribeCoreAsync<string>("back.>");
        await UntilReceivedAsync(onB, "back.probe", onASub);
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task RoutePortStartsWithTheHandshakeAndThenSendsInfo(string kind)
    {
        using var pki = new TestPki();
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec([kind]) { ClusterConfigOf = _ => pki.PeerTlsBlock("route") });
        var (cert, key) = pki.IssuePeer("probe");
        using var probeCertificate = TestPki.Load(cert, key);
        await using var probe = await TlsRawClient.ConnectAsync(cluster[0].RoutePort, pki.CaCertificate, probeCertificate, handshakeFirst: true);
        Assert.StartsWith("INFO {", probe.Info, StringComparison.Ordinal);
        Assert.Contains("\"tls_required\":true,\"tls_verify\":true", probe.Info, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task PeerOfAnotherAuthorityIsRefusedWithGosLogLine(string kindA, string kindB)
    {
        using var trusted = new TestPki("Trusted CA");
        using var other = new TestPki("Other CA");
        // B shows a certificate of another authority (and trusts A's): A refuses it as the server A dials and as the client dialling A.
        var spec = new ClusterSpec([kindA, kindB])
        {
            WaitForMesh = false,
            ClusterConfigOf = s => s.Index == 0 ? trusted.PeerTlsBlock("route-a") : other.PeerTlsBlock("route-b", trusted.CaFile),
        };
        await using var cluster = await TestCluster.StartAsync(spec);
        var a = cluster[0];
        await a.Log.WaitForAsync("TLS route handshake error: tls: failed to verify client certificate: x509: certificate signed by unknown authority",
            timeout: TestCluster.Deadline);
        await a.Log.WaitForAsync(l => l.EndsWith("TLS route handshake error: x509: certificate signed by unknown authority", StringComparison.Ordinal),
            timeout: TestCluster.Deadline);
        Assert.Empty(await a.RoutedPeersAsync());
    }
}
