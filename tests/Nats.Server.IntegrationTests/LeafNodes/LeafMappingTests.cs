using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// Account mappings across a leaf connection, Go 2.9.10 and ours in every pairing: a server announces its mapping
/// sources to its leafs (Go's initLeafNodeSmapAndSendSubs), so a publish on the other side crosses, and maps the
/// message it then receives from the leaf as it maps a client's publish (also into a queue group that the message,
/// having no queue names, would otherwise not serve).
/// </summary>
public sealed class LeafMappingTests
{
    public static TheoryData<string, string> Pairs => new() { { "go", "go" }, { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task MessagesFromTheLeafAreMappedOnEachSide(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind],
            hubExtra: "mappings {\n  \"hmap.in\": \"hmap.out\"\n  \"hq.in\": \"hq.out\"\n}",
            leafExtra: "mappings {\n  \"lmap.in\": \"lmap.out\"\n}");
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });

        await ExpectOnceEachAsync(onLeaf, onHub, "hmap.in", "hmap.out", queue: null);
        await ExpectOnceEachAsync(onHub, onLeaf, "lmap.in", "lmap.out", queue: null);
        await ExpectOnceEachAsync(onLeaf, onHub, "hq.in", "hq.out", queue: "workers");
    }

    /// <summary>Publishes on <paramref name="publishSubject"/> through <paramref name="publisher"/> until the mapped subject's
    /// subscriber sees one (the mapping source's LS+ may still be on its way), then five more and an end marker: each must
    /// arrive once, in order.</summary>
    private static async Task ExpectOnceEachAsync(NatsConnection publisher, NatsConnection subscriber, string publishSubject,
        string mappedSubject, string? queue)
    {
        using var cts = new CancellationTokenSource(Cluster.TestCluster.Deadline);
        await using var sub = await subscriber.SubscribeCoreAsync<string>(mappedSubject, queueGroup: queue, cancellationToken: cts.Token);
        await subscriber.PingAsync(cts.Token);
        using var probing = CancellationTokenSource.CreateLinkedTokenSource(cts.Token);
        var probe = Task.Run(async () =>
        {
            var i = 0;
            while (!probing.IsCancellationRequested)
            {
                await publisher.PublishAsync(publishSubject, $"probe{i++}", cancellationToken: probing.Token);
                await Task.Delay(200, probing.Token);
            }
        }, probing.Token);
        var first = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal(mappedSubject, first.Subject);
        await probing.CancelAsync();
        await Task.WhenAny(probe);

        var read = cts;
        for (var i = 1; i <= 5; i++)
        {
            await publisher.PublishAsync(publishSubject, $"m{i}", cancellationToken: read.Token);
        }
        await publisher.PublishAsync(publishSubject, "end", cancellationToken: read.Token);
        var seen = new List<string>();
        while (true)
        {
            var m = await sub.Msgs.ReadAsync(read.Token);
            Assert.Equal(mappedSubject, m.Subject);
            if (m.Data == "end")
            {
                break;
            }
            if (!m.Data!.StartsWith("probe", StringComparison.Ordinal))
            {
                seen.Add(m.Data);
            }
        }
        Assert.Equal(["m1", "m2", "m3", "m4", "m5"], seen);
    }
}
