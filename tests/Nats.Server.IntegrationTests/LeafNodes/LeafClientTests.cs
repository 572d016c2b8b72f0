using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// nats.go and nats.js with one connection on the hub and one on its leaf, in every Go/ours mix: pub/sub with
/// wildcards and headers both ways, queue groups served once with local members preferred, request/reply and
/// no-responders across, and an unsubscribe withdrawing the interest from the other side (LS-). Go/Go runs too:
/// it validates the programs against the reference.
/// </summary>
public sealed class LeafClientTests
{
    public static TheoryData<string, string, string> Cases()
    {
        var data = new TheoryData<string, string, string>();
        foreach (var client in new[] { "nats.go", "nats.js" })
        {
            foreach (var (hub, leaf) in new[] { ("go", "go"), ("go", "ours"), ("ours", "go"), ("ours", "ours") })
            {
                data.Add(client, hub, leaf);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task ClientWorksAcrossTheLeafConnection(string client, string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind]);
        using var cts = new CancellationTokenSource(TimeSpan.FromMinutes(3));
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        // Subscribers on the leaf, publishers on the hub: the program's first server is where it subscribes.
        await using var program = await ClientProgram.StartAsync(client, [leaf.Url, hub.Url], leaf: true);
        while (await program.ReadLineAsync(cts.Token) is { } line)
        {
            var words = line.Split(' ');
            if (words[0] == "CHECK")
            {
                // What the leaf told the hub: the unsubscribed subject is gone (LS-), the other one is still there.
                await TestCluster.WaitForAsync(async () =>
                {
                    var subjects = await LeafTopology.LeafSubjectsAsync(hub, cts.Token);
                    return !subjects.Contains(words[1]) && subjects.Contains(words[2]);
                }, $"{hub} holds {words[2]} and not {words[1]} for its leaf", cts.Token);
                await program.AnswerAsync("ok");
            }
        }
        var (exitCode, errors) = await program.WaitForExitAsync(cts.Token);
        Assert.True(exitCode == 0 && program.Output.Contains("PASS", StringComparison.Ordinal),
            $"{client} on hub {hubKind}, leaf {leafKind} failed (exit {exitCode}):\n{program.Output}\n{errors}\n{topology.Logs()}");
    }
}
