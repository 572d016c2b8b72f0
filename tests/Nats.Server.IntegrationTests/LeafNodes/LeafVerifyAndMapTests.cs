using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// <c>leafnodes { tls { verify_and_map: true } authorization { users [...] } }</c>, Go 2.9.10 and ours in every pairing: the
/// spoke's certificate names the leaf user (here its subject, <c>CN=spoke</c>), whose account the connection binds to; a
/// certificate naming no leaf user is refused as a failed authentication.
/// </summary>
public sealed class LeafVerifyAndMapTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    private static readonly TimeSpan Timeout = TestCluster.Deadline;

    private const string HubAccounts = """
        accounts {
          A { users [ { user: a, password: a } ] }
          B { users [ { user: b, password: b } ] }
        }
        """;

    private static string HubLeafConfig(TestPki pki, string mappedUser) =>
        pki.PeerTlsBlock("hub", extra: "verify_and_map: true")
        + $"\n  authorization {{ users [ {{ user: \"{mappedUser}\", account: A }}, {{ user: other, password: x, account: B }} ] }}";

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task TheCertificateNamesTheLeafUserAndItsAccount(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: HubLeafConfig(pki, "CN=spoke"),
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "tls://", StringComparison.Ordinal)}\"\n{spokeTls}",
            hubExtra: HubAccounts);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        using (var leafz = await hub.GetJsonAsync("/leafz"))
        {
            Assert.Equal("A", leafz.RootElement.GetProperty("leafs")[0].GetProperty("account").GetString());
        }
        await using var inA = new NatsConnection(new NatsOpts { Url = hub.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await LeafTlsTests.AssertTrafficBothWaysAsync(inA, onLeaf);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task AUserInTheUrlIsOverriddenByTheCertificateWithGosWarning(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: HubLeafConfig(pki, "CN=spoke"),
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "tls://other@", StringComparison.Ordinal)}\"\n{spokeTls}",
            hubExtra: HubAccounts);
        var hub = topology.Hub[0];
        await hub.Log.WaitForAsync(l => l.EndsWith("[WRN] User \"other\" found in connect proto, but user required from cert", StringComparison.Ordinal)
            || l.Contains("User \"other\" found in connect proto, but user required from cert", StringComparison.Ordinal), timeout: Timeout);
        using var leafz = await hub.GetJsonAsync("/leafz");
        Assert.Equal("A", leafz.RootElement.GetProperty("leafs")[0].GetProperty("account").GetString());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task ACertificateNamingNoLeafUserIsRefused(string hubKind, string leafKind)
    {
        using var pki = new TestPki();
        var spokeTls = pki.PeerTlsBlock("spoke");
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: HubLeafConfig(pki, "CN=someone-else"),
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "tls://", StringComparison.Ordinal)}\"\n{spokeTls}",
            hubExtra: HubAccounts, waitForLeafs: false);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        var (line, index) = await hub.Log.WaitForAsync("authentication error", timeout: Timeout);
        // The hub has client users (accounts A and B), so Go's authViolation names the CONNECT's (empty) user.
        Assert.True(System.Text.RegularExpressions.Regex.IsMatch(line, @" - lid:\d+ - authentication error - User """"$"), line);
        Assert.Contains("Leafnode connection closed: Authentication Failure", (await hub.Log.WaitForAsync("Leafnode connection closed", index, Timeout)).Line,
            StringComparison.Ordinal);
        await leaf.Log.WaitForAsync("Authorization Violation", timeout: Timeout);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
    }
}
