using Nats.Server.IntegrationTests.Auth.Jwt;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// How a spoke proves itself to a hub, Go 2.9.10 and ours in every pairing: a remote's <c>credentials</c> (.creds: the
/// user JWT and the nonce signed with its seed in the leaf CONNECT) against a hub in operator mode, which binds the
/// leaf to the user's account; a user of an unknown account refused with Go's log line; and a remote's user and
/// password checked against the hub's client users (no <c>leafnodes.authorization</c>), binding to that user's account.
/// </summary>
public sealed class LeafCredentialsTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-leaf-creds-").FullName;

    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task CredentialsBindTheLeafToTheUsersAccountOnAnOperatorModeHub(string hubKind, string leafKind)
    {
        var f = new OperatorFixture();
        var spokeCreds = WriteCreds("spoke.creds", f.User());
        var clientCreds = WriteCreds("client.creds", f.User());
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, urls) => $"url: \"{urls[0]}\", credentials: \"{spokeCreds}\"",
            hubExtra: string.Join('\n', f.Settings().RawConfig));
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url, AuthOpts = new NatsAuthOpts { CredsFile = clientCreds } });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await LeafTlsTests.AssertTrafficBothWaysAsync(onHub, onLeaf);
        using var leafz = await hub.GetJsonAsync("/leafz");
        Assert.Equal(f.Account.GetPublicKey(), leafz.RootElement.GetProperty("leafs")[0].GetProperty("account").GetString());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task CredentialsOfAnUnknownAccountAreRefused(string hubKind, string leafKind)
    {
        var f = new OperatorFixture();
        var stranger = JwtMinter.NewKey(PrefixByte.Account);
        var key = JwtMinter.NewKey(PrefixByte.User);
        var spokeCreds = WriteCreds("stranger.creds", (key, JwtMinter.User(stranger, key.GetPublicKey())));
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, urls) => $"url: \"{urls[0]}\", credentials: \"{spokeCreds}\"",
            hubExtra: string.Join('\n', f.Settings().RawConfig), waitForLeafs: false);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        var (line, _) = await hub.Log.WaitForAsync(l => l.Contains(" - lid:", StringComparison.Ordinal) && l.EndsWith("authentication error", StringComparison.Ordinal),
            timeout: TestCluster.Deadline);
        Assert.Matches(@" - lid:\d+ - authentication error$", line);
        await leaf.Log.WaitForAsync("Authorization Violation", timeout: TestCluster.Deadline);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RemoteUserIsCheckedAgainstTheHubsClientUsers(string hubKind, string leafKind)
    {
        const string hubAccounts = """
            accounts {
              A { users [ { user: spoke, password: s3cret }, { user: a, password: a } ] }
              B { users [ { user: b, password: b } ] }
            }
            """;
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "nats-leaf://spoke:s3cret@", StringComparison.Ordinal)}\"",
            hubExtra: hubAccounts);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var inA = new NatsConnection(new NatsOpts { Url = hub.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await LeafTlsTests.AssertTrafficBothWaysAsync(inA, onLeaf);
        using var leafz = await hub.GetJsonAsync("/leafz");
        Assert.Equal("A", leafz.RootElement.GetProperty("leafs")[0].GetProperty("account").GetString());
    }

    private string WriteCreds(string name, (KeyPair Key, string Jwt) user)
    {
        var path = Path.Combine(_dir, name);
        File.WriteAllText(path, JwtMinter.Creds(user.Jwt, user.Key));
        return path;
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_dir, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
