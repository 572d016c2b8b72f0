using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// Leaf connections over TLS (<c>leafnodes { tls {} }</c> on the hub, <c>remotes [{ url: "tls://...", tls {} }]</c> on the
/// spoke) between real processes, Go 2.9.10 and ours in every pairing, certificates made by the test. As Go: the hub sends
/// its INFO in plain text with tls_required, then both sides upgrade; a certificate of another authority is refused with
/// Go's log line on the side that checks it.
/// </summary>
public sealed class LeafTlsTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafOverTlsCarriesMessagesBothWays(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: pki.PeerTlsBlock("hub", extra: "verify: true"),
            remote: (_, urls) => $"url: \"{Tls(urls[0])}\"\n{pki.PeerTlsBlock("spoke")}");
        await AssertTrafficBothWaysAsync(topology);
        // The hub's /leafz and the spoke's show the connection; the link is encrypted (a plain leaf would not have got in).
        Assert.Equal(1, await LeafTopology.LeafCountAsync(topology.Hub[0]));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RemoteWithOnlyTheCaFollowsTheHubsTlsRequired(string hubKind, string leafKind)
    {
        // The hub does not verify; the spoke's tls {} has no certificate of its own, only the CA to check the hub with.
        using var pki = new TestPki();
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: pki.PeerTlsBlock("hub"),
            remote: (_, urls) => $"url: \"{urls[0]}\"\ntls {{ ca_file: \"{pki.CaFile}\", timeout: 10 }}");
        await AssertTrafficBothWaysAsync(topology);
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task HubSendsInfoInPlainTextWithTlsRequired(string kind)
    {
        using var pki = new TestPki();
        await using var topology = await LeafTopology.StartAsync([kind], ["ours"], hubLeafConfig: pki.PeerTlsBlock("hub", extra: "verify: true"),
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{pki.PeerTlsBlock("spoke")}");
        var info = await ReadLeafInfoAsync(topology.HubLeafPorts[0]);
        Assert.StartsWith("INFO {", info, StringComparison.Ordinal);
        Assert.Contains("\"auth_required\":true,\"tls_required\":true,\"tls_verify\":true", info, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task SpokeOfAnotherAuthorityIsRefusedWithGosLogLine(string hubKind, string leafKind)
    {
        using var trusted = new TestPki("Trusted CA");
        using var other = new TestPki("Other CA");
        // The spoke trusts the hub's CA but shows a certificate of another one: the hub refuses it in the handshake.
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: trusted.PeerTlsBlock("hub", extra: "verify: true"),
            remote: (_, urls) => $"url: \"{Tls(urls[0])}\"\n{other.PeerTlsBlock("spoke", trusted.CaFile)}",
            waitForLeafs: false);
        var hub = topology.Hub[0];
        await hub.Log.WaitForAsync(
            l => l.EndsWith("TLS leafnode handshake error: tls: failed to verify client certificate: x509: certificate signed by unknown authority",
                StringComparison.Ordinal), timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
        // Nothing else is disturbed: a client of the hub still works.
        await using var client = new NatsConnection(new NatsOpts { Url = hub.Url });
        await client.PingAsync();
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubOfAnotherAuthorityIsRefusedWithGosLogLine(string hubKind, string leafKind)
    {
        using var trusted = new TestPki("Trusted CA");
        using var other = new TestPki("Other CA");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: other.PeerTlsBlock("hub"),
            remote: (_, urls) => $"url: \"{Tls(urls[0])}\"\n{trusted.PeerTlsBlock("spoke")}",
            waitForLeafs: false);
        await topology.Leaf[0].Log.WaitForAsync(
            l => l.EndsWith("TLS leafnode handshake error: x509: certificate signed by unknown authority", StringComparison.Ordinal),
            timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(topology.Hub[0]));
    }

    internal static async Task AssertTrafficBothWaysAsync(LeafTopology topology)
    {
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await AssertTrafficBothWaysAsync(onHub, onLeaf);
    }

    internal static async Task AssertTrafficBothWaysAsync(NatsConnection onHub, NatsConnection onLeaf)
    {
        await using var down = await onLeaf.SubscribeCoreAsync<string>("down.>");
        await using var up = await onHub.SubscribeCoreAsync<string>("up.>");
        await UntilReceivedAsync(onHub, "down.probe", down);
        await UntilReceivedAsync(onLeaf, "up.probe", up);
        await onHub.PublishAsync("down.x", "to the leaf");
        await onLeaf.PublishAsync("up.x", "to the hub");
        Assert.Equal("to the leaf", (await NextAsync(down, "down.probe")).Data);
        Assert.Equal("to the hub", (await NextAsync(up, "up.probe")).Data);
    }

    private static string Tls(string url) => url.Replace("nats-leaf://", "tls://", StringComparison.Ordinal);

    /// <summary>The first line the hub's leaf port sends a plain TCP client.</summary>
    private static async Task<string> ReadLeafInfoAsync(int port)
    {
        using var tcp = new System.Net.Sockets.TcpClient();
        await tcp.ConnectAsync(System.Net.IPAddress.Loopback, port);
        using var reader = new StreamReader(tcp.GetStream());
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        return await reader.ReadLineAsync(cts.Token) ?? "";
    }
}
