using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Tls;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// <c>pinned_certs</c> on leaf connections, Go 2.9.10 and ours in every pairing: once the handshake is done, the hub checks
/// the spoke's certificate against its <c>leafnodes { tls { pinned_certs } }</c>, and the spoke checks the hub's against
/// its own leafnodes block's set (Go never reads a remote's <c>tls {}</c> pins). A certificate not pinned closes the
/// connection with Go's "TLS leafnode handshake error: certificate not pinned".
/// </summary>
public sealed class LeafPinnedCertsTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    private const string NotPinned = "TLS leafnode handshake error: certificate not pinned";

    /// <summary>Go's key id, computed here independently: SHA-256 of the certificate's DER SubjectPublicKeyInfo.</summary>
    internal static string KeyId(string certFile)
    {
        using var cert = X509Certificate2.CreateFromPem(File.ReadAllText(certFile));
        return Convert.ToHexStringLower(SHA256.HashData(cert.PublicKey.ExportSubjectPublicKeyInfo()));
    }

    private static string CertOf(TestPki pki, string name) => Path.Combine(pki.Directory, $"{name}-cert.pem");

    private static string Pins(params string[] keyIds) => $"pinned_certs: [{string.Join(", ", keyIds.Select(k => $"\"{k}\""))}]";

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubAcceptsAPinnedSpoke(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        // Upper case: Go lower-cases the configured ids.
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: pki.PeerTlsBlock("hub", extra: "verify: true\n  " + Pins(KeyId(CertOf(pki, "spoke")).ToUpperInvariant(), new string('a', 64))),
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}");
        await LeafTlsTests.AssertTrafficBothWaysAsync(topology);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubRefusesASpokeNotPinnedWithGosLogLine(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        var other = pki.IssuePeer("other");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: pki.PeerTlsBlock("hub", extra: "verify: true\n  " + Pins(KeyId(other.CertFile))),
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}", waitForLeafs: false);
        var hub = topology.Hub[0];
        await hub.Log.WaitForAsync(l => l.EndsWith(NotPinned, StringComparison.Ordinal), timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubWithPinsButNoVerifyRefusesEverySpoke(string hubKind, string leafKind)
    {
        // Without verify the hub never asks for a certificate, so there is nothing to match (Go: "did not provide a certificate").
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: pki.PeerTlsBlock("hub", extra: Pins(KeyId(CertOf(pki, "spoke")))),
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}", waitForLeafs: false);
        var hub = topology.Hub[0];
        await hub.Log.WaitForAsync(l => l.EndsWith(NotPinned, StringComparison.Ordinal), timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task SpokeChecksTheHubAgainstItsLeafnodesBlock(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var hubTls = pki.PeerTlsBlock("hub");
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: hubTls,
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}",
            spokeLeafConfig: pki.PeerTlsBlock("spoke-block", extra: Pins(KeyId(CertOf(pki, "hub")))));
        await LeafTlsTests.AssertTrafficBothWaysAsync(topology);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task SpokeRefusesAHubNotPinnedWithGosLogLine(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var hubTls = pki.PeerTlsBlock("hub");
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: hubTls,
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}",
            spokeLeafConfig: pki.PeerTlsBlock("spoke-block", extra: Pins(KeyId(CertOf(pki, "spoke")))),
            waitForLeafs: false);
        await topology.Leaf[0].Log.WaitForAsync(l => l.EndsWith(NotPinned, StringComparison.Ordinal), timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(topology.Hub[0]));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task PinsInARemotesTlsBlockAreNotChecked(string hubKind, string leafKind)
    {
        // Go parses a remote's pinned_certs and never uses them: a hub that is not in them is still accepted.
        using var pki = new TestPki();
        var hubTls = pki.PeerTlsBlock("hub");
        var other = pki.IssuePeer("other");
        var spokeTls = pki.PeerTlsBlock("spoke", extra: Pins(KeyId(other.CertFile)));
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: hubTls,
            remote: (_, urls) => $"url: \"{urls[0]}\"\n{spokeTls}");
        await LeafTlsTests.AssertTrafficBothWaysAsync(topology);
    }
}
