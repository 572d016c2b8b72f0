using System.Collections.Concurrent;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.JetStream.Cluster.Faults;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Stream log compaction on three of our server processes, with the compaction threshold lowered to 100 entries
/// (<c>NATS_TEST_STREAM_COMPACT_ENTRIES</c>) so that a few hundred messages compact the log several times: a replica
/// that was down while the others compacted, or that a scale-up added, gets the leader's snapshot and copies the
/// messages from the leader's store; a restart of every server keeps every acknowledged message. Each replica is
/// finally read from its own store by a standalone server.
/// </summary>
public class ReplicatedStreamCompactionTests(ITestOutputHelper output)
{
    private const int CompactAfter = 100;

    private static ClusterSpec Spec() => ReplicatedStreamTests.Spec() with
    {
        Environment = new Dictionary<string, string> { ["NATS_TEST_STREAM_COMPACT_ENTRIES"] = CompactAfter.ToString(System.Globalization.CultureInfo.InvariantCulture) },
    };

    [Fact]
    public async Task FollowerDownWhileTheLogCompactedCatchesUpAndEveryRestartKeepsEverything()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(300));
        var all = cluster.Servers.ToList();
        var acked = new ConcurrentDictionary<string, ulong>();
        await using (var nc = new NatsConnection(ReplicatedStreamTests.App(all[0])))
        {
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("CMP", ["cmp.>"]) { NumReplicas = 3 }, cts.Token);
            await PublishAsync(js, "cmp.x", "a", 150, acked, cts.Token);
        }
        var leader = await LeaderAsync(all[0], "CMP", cts.Token);
        var follower = all.First(s => s.Name != leader);
        var home = all.First(s => s.Name != leader && s != follower);
        await follower.KillAsync();
        await using (var nc = new NatsConnection(ReplicatedStreamTests.App(home)))
        {
            await PublishAsync(new NatsJSContext(nc), "cmp.x", "b", 1000, acked, cts.Token);
        }
        var leaderServer = all.Single(s => s.Name == leader);
        var (snapshots, entries) = GroupLog(leaderServer);
        output.WriteLine($"leader {leader}: snapshot files {snapshots}, log entries kept {entries}");
        Assert.Equal(1, snapshots);
        Assert.True(entries < 1000, $"the leader's log still holds {entries} entries");

        await cluster.RestartAsync(follower.Index);
        await ReplicatedStreamTests.ReplicasAgreeAsync(cluster, "CMP", acked.Count, cts.Token);
        Assert.Equal(1, GroupLog(follower).Snapshots);
        Assert.Contains("catching up stream", follower.Log.Text, StringComparison.Ordinal);

        // kill -9 of every server at once, then all started again: nothing acknowledged may be lost.
        foreach (var server in all)
        {
            await server.KillAsync();
        }
        foreach (var server in all)
        {
            await server.StartAsync();
        }
        await cluster.WaitForMeshAsync();
        await using (var nc = new NatsConnection(ReplicatedStreamTests.App(home)))
        {
            await PublishAsync(new NatsJSContext(nc), "cmp.x", "c", 50, acked, cts.Token);
        }
        await ReplicatedStreamTests.ReplicasAgreeAsync(cluster, "CMP", acked.Count, cts.Token);
        await EveryReplicaHoldsExactlyAsync(cluster, "CMP", acked, cts.Token);
    }

    [Fact]
    public async Task ReplicaAddedByScaleUpCatchesUpPastACompactedLog()
    {
        await using var cluster = await TestCluster.StartAsync(Spec());
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(300));
        var all = cluster.Servers.ToList();
        var acked = new ConcurrentDictionary<string, ulong>();
        await using (var nc = new NatsConnection(ReplicatedStreamTests.App(all[0])))
        {
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("GROW", ["grow.>"]) { NumReplicas = 1 }, cts.Token);
            await PublishAsync(js, "grow.x", "a", 300, acked, cts.Token);
            var grown = await js.UpdateStreamAsync(new StreamConfig("GROW", ["grow.>"]) { NumReplicas = 3 }, cts.Token);
            Assert.Equal(3, grown.Info.Config.NumReplicas);
            await PublishAsync(js, "grow.x", "b", 400, acked, cts.Token);
        }
        await ReplicatedStreamTests.ReplicasAgreeAsync(cluster, "GROW", acked.Count, cts.Token);
        foreach (var server in all)
        {
            var (snapshots, entries) = GroupLog(server);
            output.WriteLine($"{server.Name}: snapshot files {snapshots}, log entries kept {entries}");
        }
        await EveryReplicaHoldsExactlyAsync(cluster, "GROW", acked, cts.Token);
    }

    /// <summary>Publishes <paramref name="count"/> unique payloads on <paramref name="subject"/>, 50 in flight, each retried until acknowledged.</summary>
    private static async Task PublishAsync(NatsJSContext js, string subject, string prefix, int count, ConcurrentDictionary<string, ulong> acked, CancellationToken token)
    {
        for (var from = 0; from < count; from += 50)
        {
            await Task.WhenAll(Enumerable.Range(from, Math.Min(50, count - from)).Select(async i =>
            {
                var payload = $"{prefix}-{i}";
                var ack = await ReplicatedStreamTests.PublishUntilAckedAsync(js, subject, payload, token);
                acked[payload] = ack.Seq;
            }));
        }
    }

    /// <summary>The stream group's RAFT directory on a server: whether it has a snapshot, and how many entries its log holds.</summary>
    private static (int Snapshots, int Entries) GroupLog(ClusterServer server)
    {
        var group = Directory.EnumerateDirectories(server.StoreDir, "S-R3*", SearchOption.AllDirectories).Single();
        var snapshots = File.Exists(Path.Combine(group, "snap.dat")) ? 1 : 0;
        var entries = 0;
        var wal = File.ReadAllBytes(Path.Combine(group, "wal.log"));
        for (var at = 0; at + 8 <= wal.Length; entries++)
        {
            at += 8 + (int)System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(wal.AsSpan(at));
        }
        return (snapshots, entries);
    }

    private static async Task<string> LeaderAsync(ClusterServer via, string stream, CancellationToken token)
    {
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(via));
        var js = new NatsJSContext(nc);
        while (true)
        {
            try
            {
                var info = await js.GetStreamAsync(stream, cancellationToken: token);
                if (info.Info.Cluster?.Leader is { Length: > 0 } leader)
                {
                    return leader;
                }
            }
            catch (NatsException)
            {
            }
            await Task.Delay(100, token);
        }
    }

    /// <summary>Stops every server and reads each replica from its own store: every acknowledged message once, at its sequence, nothing else.</summary>
    private async Task EveryReplicaHoldsExactlyAsync(TestCluster cluster, string stream, IReadOnlyDictionary<string, ulong> acked, CancellationToken token)
    {
        foreach (var server in cluster.Servers)
        {
            await server.StopAsync();
        }
        var expected = acked.ToDictionary(a => a.Value, a => a.Key);
        foreach (var server in cluster.Servers)
        {
            var replica = await ReplicaContents.ReadAsync(server, stream, token);
            output.WriteLine($"{server.Name}: {replica.Messages.Count} messages, last sequence {replica.LastSeq}");
            Assert.Equal((ulong)acked.Count, replica.LastSeq);
            Assert.Equal(expected.Count, replica.Messages.Count);
            foreach (var (seq, payload) in expected)
            {
                Assert.True(replica.Messages.TryGetValue(seq, out var held), $"{server.Name}: acknowledged {payload} (seq {seq}) missing");
                Assert.Equal(payload, held);
            }
        }
    }
}
