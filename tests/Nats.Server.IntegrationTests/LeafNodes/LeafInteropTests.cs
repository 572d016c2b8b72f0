using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// A hub and a leaf (and two routed hubs), every server Go 2.9.10 or ours as a real process, with NATS.Net
/// clients on both sides: traffic after kill -9 and restart of either side, account binding through the hub's
/// leaf users, refused credentials, deny lists, loop detection, and a leaf moving between two routed hubs
/// without duplicates.
/// </summary>
public sealed class LeafInteropTests
{
    // Generous: under a full suite on a loaded 2-core host a leaf's first CONNECT can miss the hub's 2 s auth timeout,
    // and the reconnect plus interest propagation across four servers then took longer than 30 s.
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task TrafficFlowsAgainAfterEitherSideIsKilledAndRestarted(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind]);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        foreach (var victim in new[] { "hub", "leaf" })
        {
            if (victim == "hub")
            {
                await topology.Hub.KillAsync(0);
                await topology.Hub.RestartAsync(0);
            }
            else
            {
                await topology.Leaf.KillAsync(0);
                await topology.Leaf.RestartAsync(0);
            }
            await topology.WaitForLeafsAsync();
            await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
            await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
            await using var down = await onLeaf.SubscribeCoreAsync<string>("down.>");
            await using var up = await onHub.SubscribeCoreAsync<string>("up.>");
            await UntilReceivedAsync(onHub, "down.probe", down);
            await UntilReceivedAsync(onLeaf, "up.probe", up);
            await onHub.PublishAsync("down.after", victim);
            await onLeaf.PublishAsync("up.after", victim);
            Assert.Equal(("down.after", victim), Pair(await NextAsync(down, "down.probe")));
            Assert.Equal(("up.after", victim), Pair(await NextAsync(up, "up.probe")));
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafUserBindsTheConnectionToItsAccount(string hubKind, string leafKind)
    {
        const string hubAccounts = """
            accounts {
              A { users [ { user: a, password: a } ] }
              B { users [ { user: b, password: b } ] }
            }
            """;
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: "  authorization { users [ { user: spoke, password: s3cret, account: A } ] }",
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "nats-leaf://spoke:s3cret@", StringComparison.Ordinal)}\"",
            hubExtra: hubAccounts);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var inA = new NatsConnection(new NatsOpts { Url = hub.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var inB = new NatsConnection(new NatsOpts { Url = hub.Url, AuthOpts = new NatsAuthOpts { Username = "b", Password = "b" } });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await using var subA = await inA.SubscribeCoreAsync<string>("bound.>");
        await using var subB = await inB.SubscribeCoreAsync<string>("bound.>");
        await UntilReceivedAsync(onLeaf, "bound.probe", subA);
        await onLeaf.PublishAsync("bound.x", "to A");
        Assert.Equal(("bound.x", "to A"), Pair(await NextAsync(subA, "bound.probe")));
        // B shares the subject but not the account: nothing of the leaf's reaches it (a round trip through A proves it was sent).
        await inB.PingAsync();
        Assert.False(subB.Msgs.TryRead(out var stray), $"account B got {stray.Subject}");

        using var leafz = await hub.GetJsonAsync("/leafz");
        Assert.Equal("A", leafz.RootElement.GetProperty("leafs")[0].GetProperty("account").GetString());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task WrongCredentialsAreRefusedAndLogged(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubLeafConfig: "  authorization { user: spoke, password: s3cret }",
            remote: (_, urls) => $"url: \"{urls[0].Replace("nats-leaf://", "nats-leaf://spoke:wrong@", StringComparison.Ordinal)}\"",
            waitForLeafs: false);
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        // Go's line for a leaf that fails authentication, then the close; the leaf dials again (and fails again).
        var (line, index) = await hub.Log.WaitForAsync("authentication error", timeout: Timeout);
        Assert.Contains("Leafnode connection closed: Authentication Failure", (await hub.Log.WaitForAsync("Leafnode connection closed", index, Timeout)).Line,
            StringComparison.Ordinal);
        await hub.Log.WaitForAsync("authentication error", index + 1, Timeout);
        Assert.Matches(@" - lid:\d+ - authentication error$", line);
        await leaf.Log.WaitForAsync("Authorization Violation", timeout: Timeout);
        Assert.Equal(0, await LeafTopology.LeafCountAsync(hub));
        // Nothing else is disturbed: a client of the hub still works.
        await using var client = new NatsConnection(new NatsOpts { Url = hub.Url });
        await client.PingAsync();
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task DenyListsKeepSubjectsOnTheirSide(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            remote: (_, urls) => $"url: \"{urls[0]}\", deny_imports: [\"private.>\"], deny_exports: [\"secret.>\"]");
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        await using var hubSide = await onHub.SubscribeCoreAsync<string>(">");
        await using var leafSide = await onLeaf.SubscribeCoreAsync<string>(">");
        await UntilReceivedAsync(onLeaf, "open.up", hubSide);
        await UntilReceivedAsync(onHub, "open.down", leafSide);

        // Denied subjects first, then an allowed one on the same path: the allowed one is the next message.
        await onLeaf.PublishAsync("secret.x", "stays on the leaf");
        await onLeaf.PublishAsync("open.after", "up");
        await onHub.PublishAsync("private.x", "stays on the hub");
        await onHub.PublishAsync("open.after", "down");
        // Each side also sees its own publishes; what came across is in order behind the denied one.
        Assert.DoesNotContain("stays on the leaf", await PayloadsUntilAsync(hubSide, "up"));
        Assert.DoesNotContain("stays on the hub", await PayloadsUntilAsync(leafSide, "down"));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task TwoRemotesIntoTwoRoutedHubsInOneAccountAreALoop(string hubKind, string leafKind)
    {
        // The leaf's $LDS subject goes to hub A, across the route to hub B, and back to the leaf on its second remote.
        await using var topology = await LeafTopology.StartAsync([hubKind, hubKind], [leafKind],
            remote: (_, urls) => $"url: \"{urls[0]}\" }}, {{ url: \"{urls[1]}\"", waitForLeafs: false);
        var leaf = topology.Leaf[0];
        var (line, _) = await leaf.Log.WaitForAsync("Loop detected for leafnode account", timeout: Timeout);
        Assert.Contains("Loop detected for leafnode account=\"$G\". Delaying attempt to reconnect for 30s", line, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafMovesBetweenTwoRoutedHubsWithoutDuplicates(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind, hubKind], [leafKind]);
        var leaf = topology.Leaf[0];
        for (var round = 0; round < 2; round++)
        {
            await using var onA = new NatsConnection(new NatsOpts { Url = topology.Hub[0].Url });
            await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
            await using var onB = new NatsConnection(new NatsOpts { Url = topology.Hub[1].Url });
            var hubs = new[] { onA, onB };
            var live = topology.Hub.Servers.Select((s, i) => (s, i)).Where(x => x.s.IsRunning).Select(x => hubs[x.i]).ToList();
            await using var atLeaf = await onLeaf.SubscribeCoreAsync<string>("m.>");
            var atHubs = new List<INatsSub<string>>();
            foreach (var connection in live)
            {
                atHubs.Add(await connection.SubscribeCoreAsync<string>("m.>"));
            }
            foreach (var connection in live)
            {
                await UntilReceivedAsync(connection, "m.probe", atLeaf);
            }
            foreach (var sub in atHubs)
            {
                await UntilReceivedAsync(onLeaf, "m.probe", sub);
            }
            for (var i = 0; i < 10; i++)
            {
                await onLeaf.PublishAsync($"m.up.{i}", "u");
                await live[i % live.Count].PublishAsync($"m.down.{i}", "d");
            }
            await onLeaf.PublishAsync("m.end", "end");
            foreach (var connection in live)
            {
                await connection.PublishAsync("m.end", "end");
            }
            // Each subscriber sees every message of the other side once, before the end markers (one per publisher).
            var down = await CollectAsync(atLeaf, "d", live.Count + 1);
            Assert.Equal(Enumerable.Range(0, 10).Select(i => $"m.down.{i}").Order(), down.Order());
            foreach (var sub in atHubs)
            {
                Assert.Equal(Enumerable.Range(0, 10).Select(i => $"m.up.{i}"), await CollectAsync(sub, "u", live.Count + 1));
            }
            foreach (var sub in atHubs)
            {
                await sub.DisposeAsync();
            }
            if (round == 0)
            {
                // Kill the hub the leaf is on: it moves to the other one.
                var connected = topology.Hub.Servers.First(s => LeafTopology.LeafCountAsync(s).GetAwaiter().GetResult() > 0);
                await connected.KillAsync();
                await topology.WaitForLeafsAsync();
            }
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task LeafClusterOnTwoRoutedHubsDeliversOnce(string hubKind, string leafKind)
    {
        // Spoke 0 on hub 0, spoke 1 on hub 1; the spokes are routed to each other, as are the hubs: every message has
        // two paths to any server, and Go's origin cluster (LS+/LMSG over routes) keeps it to one.
        await using var topology = await LeafTopology.StartAsync([hubKind, hubKind], [leafKind, leafKind],
            remote: (index, urls) => $"url: \"{urls[index]}\"");
        var servers = topology.Hub.Servers.Concat(topology.Leaf.Servers).ToList();
        var connections = new List<NatsConnection>();
        var subs = new List<INatsSub<string>>();
        try
        {
            foreach (var server in servers)
            {
                var connection = new NatsConnection(new NatsOpts { Url = server.Url });
                connections.Add(connection);
                subs.Add(await connection.SubscribeCoreAsync<string>("m.>"));
            }
            foreach (var sub in subs)
            {
                foreach (var connection in connections)
                {
                    await UntilReceivedAsync(connection, "m.probe", sub);
                }
            }
            for (var i = 0; i < connections.Count; i++)
            {
                await connections[i].PublishAsync($"m.from.{i}", "u");
                await connections[i].PublishAsync("m.end", "end");
            }
            foreach (var (sub, index) in subs.Select((s, i) => (s, i)))
            {
                var got = await CollectAsync(sub, "u", connections.Count);
                Assert.True(got.Order().SequenceEqual(Enumerable.Range(0, connections.Count).Select(i => $"m.from.{i}").Order()),
                    $"{servers[index]} got [{string.Join(", ", got)}]\n{topology.Logs()}");
            }
        }
        finally
        {
            foreach (var sub in subs)
            {
                await sub.DisposeAsync();
            }
            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }
        }
    }

    /// <summary>The subjects of the messages carrying <paramref name="data"/>, until <paramref name="ends"/> end markers arrived.</summary>
    private static async Task<List<string>> CollectAsync(INatsSub<string> sub, string data, int ends)
    {
        var subjects = new List<string>();
        using var cts = new CancellationTokenSource(Timeout);
        while (ends > 0)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            if (msg.Data == data)
            {
                subjects.Add(msg.Subject);
            }
            else if (msg.Subject == "m.end")
            {
                ends--;
            }
        }
        return subjects;
    }

    /// <summary>The payloads that arrive, up to and including <paramref name="last"/>.</summary>
    private static async Task<List<string?>> PayloadsUntilAsync(INatsSub<string> sub, string last)
    {
        var payloads = new List<string?>();
        using var cts = new CancellationTokenSource(Timeout);
        while (payloads.Count == 0 || payloads[^1] != last)
        {
            payloads.Add((await sub.Msgs.ReadAsync(cts.Token)).Data);
        }
        return payloads;
    }

    private static (string, string?) Pair(NatsMsg<string> msg) => (msg.Subject, msg.Data);
}
