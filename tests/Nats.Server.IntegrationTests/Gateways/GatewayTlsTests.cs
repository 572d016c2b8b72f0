using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// Two single-server clusters joined by a gateway over TLS (<c>gateway { tls {} }</c>), Go 2.9.10 and ours in every
/// pairing: as for routes, the handshake comes first and both sides verify the other's certificate; a gateway of
/// another authority is refused with Go's log line.
/// </summary>
public sealed class GatewayTlsTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task GatewayOverTlsCarriesMessagesBothWays(string aKind, string bKind)
    {
        using var pki = new TestPki();
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind], gatewayExtra: name => pki.PeerTlsBlock($"gw-{name}"));
        await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
        await using var onBSub = await onB.SubscribeCoreAsync<string>("gtls.>");
        await UntilReceivedAsync(onA, "gtls.probe", onBSub);
        await using var onASub = await onA.SubscribeCoreAsync<string>("gback.>");
        await UntilReceivedAsync(onB, "gback.probe", onASub);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task GatewayOfAnotherAuthorityIsRefusedWithGosLogLine(string aKind, string bKind)
    {
        using var trusted = new TestPki("Trusted CA");
        using var other = new TestPki("Other CA");
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind],
            gatewayExtra: name => name == "GA" ? trusted.PeerTlsBlock("gw-a") : other.PeerTlsBlock("gw-b", trusted.CaFile), waitForGateways: false);
        var a = topology.A[0];
        await a.Log.WaitForAsync("TLS gateway handshake error: tls: failed to verify client certificate: x509: certificate signed by unknown authority",
            timeout: TestCluster.Deadline);
        await a.Log.WaitForAsync(l => l.EndsWith("TLS gateway handshake error: x509: certificate signed by unknown authority", StringComparison.Ordinal),
            timeout: TestCluster.Deadline);
    }
}
