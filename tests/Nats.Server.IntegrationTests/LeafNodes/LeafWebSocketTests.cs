using Nats.Server.IntegrationTests.Tls;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// Leaf connections over WebSocket, Go 2.9.10 and ours in every pairing: a spoke's <c>ws://</c> or <c>wss://</c> remote
/// upgrades on the hub's websocket port at Go's <c>/leafnode</c> path (masked frames, as Go's leaf sends by default), the
/// hub's websocket listener hands it to its leaf node layer, and NATS.Net clients on both sides exchange messages.
/// </summary>
public sealed class LeafWebSocketTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafOverWebSocketCarriesMessagesBothWays(string hubKind, string leafKind)
    {
        var wsPort = LeafTopology.FreePort();
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, _) => $"url: \"ws://127.0.0.1:{wsPort}\"",
            hubExtra: $"websocket {{\n  listen: \"127.0.0.1:{wsPort}\"\n  no_tls: true\n}}");
        await LeafTlsTests.AssertTrafficBothWaysAsync(topology);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafOverSecureWebSocketCarriesMessagesBothWays(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var wsPort = LeafTopology.FreePort();
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, _) => $"url: \"wss://127.0.0.1:{wsPort}\"\ntls {{ ca_file: \"{pki.CaFile}\", timeout: 10 }}",
            hubExtra: $"websocket {{\n  listen: \"127.0.0.1:{wsPort}\"\n  {pki.PeerTlsBlock("hub-ws")}\n}}");
        await LeafTlsTests.AssertTrafficBothWaysAsync(topology);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubOfAnotherAuthorityIsRefusedWithGosLogLine(string hubKind, string leafKind)
    {
        using var trusted = new TestPki("Trusted CA");
        using var other = new TestPki("Other CA");
        var wsPort = LeafTopology.FreePort();
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, _) => $"url: \"wss://127.0.0.1:{wsPort}\"\ntls {{ ca_file: \"{trusted.CaFile}\", timeout: 10 }}",
            hubExtra: $"websocket {{\n  listen: \"127.0.0.1:{wsPort}\"\n  {other.PeerTlsBlock("hub-ws")}\n}}", waitForLeafs: false);
        await topology.Leaf[0].Log.WaitForAsync(
            l => l.EndsWith("TLS leafnode handshake error: x509: certificate signed by unknown authority", StringComparison.Ordinal),
            timeout: Cluster.TestCluster.Deadline);
        await topology.Leaf[0].Log.WaitForAsync("Error soliciting websocket connection: connection closed", timeout: Cluster.TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(topology.Hub[0]));
    }
}
