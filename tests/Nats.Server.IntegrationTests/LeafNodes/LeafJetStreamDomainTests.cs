using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// JetStream on both sides of a leaf with a domain each (<c>jetstream { domain }</c>), Go 2.9.10 and ours in every pairing:
/// a NATS.Net JetStream context naming the other side's domain reaches that side's API through the leaf (Go maps
/// <c>$JS.&lt;domain&gt;.API</c> to <c>$JS.API</c> in the account and announces it to the leaf; ours subscribes both), while
/// the plain <c>$JS.API</c> stays on each side (Go's "JetStream Not Extended" deny).
/// </summary>
public sealed class LeafJetStreamDomainTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task EachSideReachesTheOthersJetStreamThroughItsDomain(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind], jetStreamDomains: ("hub", "spoke"));
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        var hubFromLeaf = new NatsJSContext(onLeaf, new NatsJSOpts(onLeaf.Opts, domain: "hub"));
        var leafFromHub = new NatsJSContext(onHub, new NatsJSOpts(onHub.Opts, domain: "spoke"));

        // The hub's LS+ for its domain's API may still be on its way: retry the first request until it is answered.
        var orders = await UntilAnsweredAsync(() => hubFromLeaf.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"])).AsTask());
        Assert.Equal("ORDERS", orders.Info.Config.Name);
        var ack = await UntilAnsweredAsync(() => hubFromLeaf.PublishAsync("orders.1", "first").AsTask());
        ack.EnsureSuccess();
        Assert.Equal("ORDERS", ack.Stream);
        var info = await new NatsJSContext(onHub).GetStreamAsync("ORDERS");
        Assert.Equal(1L, (long)info.Info.State.Messages);

        var events = await UntilAnsweredAsync(() => leafFromHub.CreateStreamAsync(new StreamConfig("EVENTS", ["events.>"])).AsTask());
        Assert.Equal("EVENTS", events.Info.Config.Name);

        // Without a domain each side's client talks to its own JetStream: the leaf has EVENTS, not ORDERS.
        var names = new List<string>();
        await foreach (var name in new NatsJSContext(onLeaf).ListStreamNamesAsync())
        {
            names.Add(name);
        }
        Assert.Equal(["EVENTS"], names);
    }

    private static async Task<T> UntilAnsweredAsync<T>(Func<Task<T>> request)
    {
        using var cts = new CancellationTokenSource(Cluster.TestCluster.Deadline);
        while (true)
        {
            try
            {
                return await request();
            }
            catch (Exception e) when (e is NatsException or TimeoutException && !cts.IsCancellationRequested)
            {
                await Task.Delay(200, cts.Token);
            }
        }
    }
}
