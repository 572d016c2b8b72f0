using System.Text;
using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Monitoring;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// The <c>jetstream</c> block of statsz (Go's ServerStatsMsg statsz.jetstream: config without the store directory,
/// stats, and the meta group: the leader names the cluster and lists the replicas, a follower names the group
/// <c>_meta_</c>), in the answers to <c>$SYS.REQ.SERVER.PING</c> of a three-server JetStream cluster, Go's and ours
/// compared; and of a standalone server, which has no meta group.
/// </summary>
public sealed class StatszJetStreamTests
{
    private static ClusterSpec Spec(string kind, bool standalone = false) => new([kind, kind, kind])
    {
        Standalone = standalone,
        WaitForMesh = !standalone,
        ExtraConfig = s => $$"""
            jetstream { store_dir: "{{s.StoreDir}}", max_memory_store: 64MB, max_file_store: 1GB }
            system_account: SYS
            accounts {
              SYS { users: [ {user: sys, password: sys} ] }
              APP { jetstream: enabled, users: [ {user: app, password: app} ] }
            }
            """,
    };

    [Fact]
    public async Task ClusteredStatszCarriesTheJetStreamBlockAsGo()
    {
        var go = await LeaderAndFollowerAsync("go");
        var ours = await LeaderAndFollowerAsync("ours");
        foreach (var (g, o) in new[] { (go.Leader, ours.Leader), (go.Follower, ours.Follower) })
        {
            JsonCompare.SameKeys(g, o);
            JsonCompare.SameValues(g, o, "config", "stats.accounts", "stats.ha_assets", "stats.reserved_memory", "stats.reserved_storage", "meta.cluster_size");
        }
        Assert.Equal("T", ours.Leader.GetProperty("meta").GetProperty("name").GetString());
        Assert.Equal(2, ours.Leader.GetProperty("meta").GetProperty("replicas").GetArrayLength());
        Assert.Equal("_meta_", ours.Follower.GetProperty("meta").GetProperty("name").GetString());
        Assert.Equal(ours.Leader.GetProperty("meta").GetProperty("peer").GetString(), ours.Follower.GetProperty("meta").GetProperty("peer").GetString());
    }

    [Fact]
    public async Task StandaloneStatszCarriesTheJetStreamBlockAsGo()
    {
        var blocks = new Dictionary<string, JsonElement>();
        foreach (var kind in new[] { "go", "ours" })
        {
            await using var cluster = await TestCluster.StartAsync(Spec(kind, standalone: true) with { Kinds = [kind] });
            await using var sys = Connect(cluster[0]);
            blocks[kind] = (await StatszAsync(sys, 1, _ => true)).Values.Single().GetProperty("statsz").GetProperty("jetstream");
        }
        JsonCompare.SameKeys(blocks["go"], blocks["ours"]);
        JsonCompare.SameValues(blocks["go"], blocks["ours"], "config", "stats");
        Assert.False(blocks["ours"].TryGetProperty("meta", out _));
    }

    private static async Task<(JsonElement Leader, JsonElement Follower)> LeaderAndFollowerAsync(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(kind));
        await using var sys = Connect(cluster[0]);
        // Every server names the same elected leader; the leader's own answer lists its replicas.
        var answers = await StatszAsync(sys, 3, docs =>
        {
            var leaders = docs.Select(d => Meta(d)?.TryGetProperty("leader", out var l) == true ? l.GetString() : null).ToHashSet();
            // Every server has learned all three peers (a group's size grows as peers are heard from).
            return leaders.Count == 1 && leaders.Single() is { Length: > 0 } leader
                && docs.All(d => Meta(d)!.Value.GetProperty("cluster_size").GetInt32() == 3)
                && docs.Any(d => d.GetProperty("server").GetProperty("name").GetString() == leader && Meta(d)!.Value.TryGetProperty("replicas", out var r) && r.GetArrayLength() == 2);
        });
        var leaderName = Meta(answers.Values.First())!.Value.GetProperty("leader").GetString();
        var leader = answers.Values.Single(d => d.GetProperty("server").GetProperty("name").GetString() == leaderName);
        var follower = answers.Values.First(d => d.GetProperty("server").GetProperty("name").GetString() != leaderName);
        return (leader.GetProperty("statsz").GetProperty("jetstream"), follower.GetProperty("statsz").GetProperty("jetstream"));
    }

    private static JsonElement? Meta(JsonElement doc) =>
        doc.GetProperty("statsz").TryGetProperty("jetstream", out var js) && js.TryGetProperty("meta", out var meta) ? meta : null;

    private static NatsConnection Connect(ClusterServer server) =>
        new(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = "sys", Password = "sys" } });

    /// <summary>Pings until <paramref name="count"/> servers answer and <paramref name="done"/> holds for their answers.</summary>
    private static async Task<Dictionary<string, JsonElement>> StatszAsync(NatsConnection sys, int count, Func<IReadOnlyCollection<JsonElement>, bool> done)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        Dictionary<string, JsonElement> answers = [];
        while (true)
        {
            cts.Token.ThrowIfCancellationRequested();
            answers = [];
            var inbox = sys.NewInbox();
            await using (var sub = await sys.SubscribeCoreAsync<byte[]>(inbox, cancellationToken: cts.Token))
            {
                await sys.PublishAsync("$SYS.REQ.SERVER.PING", Encoding.UTF8.GetBytes(""), replyTo: inbox, cancellationToken: cts.Token);
                using var window = CancellationTokenSource.CreateLinkedTokenSource(cts.Token);
                window.CancelAfter(TimeSpan.FromSeconds(2));
                try
                {
                    while (answers.Count < count)
                    {
                        var msg = await sub.Msgs.ReadAsync(window.Token);
                        var doc = JsonDocument.Parse(msg.Data!).RootElement.Clone();
                        answers[doc.GetProperty("server").GetProperty("id").GetString()!] = doc;
                    }
                }
                catch (OperationCanceledException) when (!cts.IsCancellationRequested)
                {
                }
            }
            if (answers.Count == count && done(answers.Values))
            {
                return answers;
            }
            await Task.Delay(200, cts.Token);
        }
    }
}
