using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

/// <summary>
/// RAFT under a seeded virtual-time simulation (<see cref="RaftSimulation"/>): elections, replication, lossy
/// and reordering networks, partitions, crashes that drop unsynced writes, power cuts of every node at once.
/// After the faults the network heals and every node restarts; then all logs must converge and every value
/// that was ever acknowledged (applied anywhere) must be in every node's state exactly once.
/// </summary>
public class RaftSimulationTests
{
    [Theory]
    [InlineData(3)]
    [InlineData(5)]
    public void ElectsOneLeaderAndReplicates(int size)
    {
        var sim = new RaftSimulation(size, seed: 1);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 5_000), "no leader elected");
        for (var i = 0; i < 200; i++)
        {
            Assert.NotNull(sim.Propose());
            sim.RunFor(5);
        }
        Assert.True(sim.RunUntil(sim.Converged, 10_000), "did not converge");
        AssertConsistent(sim);
        Assert.Equal(200, sim.Acked.Count);
    }

    [Fact]
    public void LeaderCrashElectsAnotherThatHasEveryAcknowledgedEntry()
    {
        var sim = new RaftSimulation(3, seed: 7);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 5_000));
        for (var round = 0; round < 5; round++)
        {
            for (var i = 0; i < 30; i++)
            {
                sim.Propose();
                sim.RunFor(3);
            }
            var old = sim.Leader()!;
            var oldTerm = old.Node!.Term;
            old.Crash();
            Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != old, 5_000), "no new leader after the crash");
            Assert.True(sim.Leader()!.Node!.Term > oldTerm);
            old.Start();
        }
        Assert.True(sim.RunUntil(sim.Converged, 20_000), "did not converge");
        AssertConsistent(sim);
        Assert.True(sim.Acked.Count >= 100, $"only {sim.Acked.Count} acknowledged");
    }

    [Fact]
    public void IsolatedLeaderStepsDownAndTheMajorityGoesOn()
    {
        var sim = new RaftSimulation(5, seed: 3);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 5_000));
        var old = sim.Leader()!;
        sim.Isolate(old.Index);
        // Proposals to the isolated leader are never acknowledged; the majority elects another.
        for (var i = 0; i < 20; i++)
        {
            old.Node!.Propose("lost"u8.ToArray());
            old.ScheduleFlush();
            sim.RunFor(10);
        }
        Assert.True(sim.RunUntil(() => sim.Nodes.Any(n => n != old && n.Node!.Role == RaftRole.Leader), 5_000));
        Assert.True(sim.RunUntil(() => old.Node!.Role != RaftRole.Leader, 5_000), "the isolated leader kept leading");
        for (var i = 0; i < 50; i++)
        {
            sim.Propose();
            sim.RunFor(5);
        }
        sim.Heal();
        Assert.True(sim.RunUntil(sim.Converged, 20_000), "did not converge");
        AssertConsistent(sim);
        Assert.DoesNotContain("lost", sim.Acked);
        Assert.All(sim.Nodes, n => Assert.DoesNotContain("lost", n.Applied));
    }

    [Fact]
    public void ReturningPeerCatchesUpFromASnapshot()
    {
        var sim = new RaftSimulation(3, seed: 11);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 5_000));
        var follower = sim.Nodes.First(n => n != sim.Leader());
        follower.Crash();
        for (var i = 0; i < 300; i++)
        {
            sim.Propose();
            sim.RunFor(3);
        }
        Assert.True(sim.Leader()!.Store.Snapshot is not null, "the leader never compacted its log");
        follower.Start();
        Assert.True(sim.RunUntil(sim.Converged, 20_000), "did not converge");
        AssertConsistent(sim);
        Assert.NotNull(follower.Store.Snapshot);
        Assert.Equal(300, sim.Acked.Count);
    }

    [Fact]
    public void AFollowersAppendCountsOnlyOnceFsynced()
    {
        var sim = new RaftSimulation(3, seed: 5);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 5_000));
        var leader = sim.Leader()!;
        var followers = sim.Nodes.Where(n => n != leader).ToArray();
        // With one follower cut off, the entry commits only through the other follower's fsync.
        sim.Isolate(followers[0].Index);
        sim.Cut(leader.Index, followers[0].Index);
        var index = leader.Node!.Propose("x"u8.ToArray());
        leader.ScheduleFlush();
        var follower = followers[1];
        Assert.True(sim.RunUntil(() => follower.Store.LastIndex >= index && follower.Store.Dirty, 1_000), "the follower never held it unsynced");
        Assert.True(leader.Node.CommitIndex < index, "committed before the follower's fsync");
        Assert.Empty(sim.Acked);
        // A power cut now loses the follower's copy; the leader's may be synced but is alone.
        foreach (var node in sim.Nodes.Where(n => n.Node is not null))
        {
            node.Crash();
        }
        Assert.True(follower.Store.LastIndex < index);
        sim.Heal();
        foreach (var node in sim.Nodes)
        {
            node.Start();
        }
        Assert.True(sim.RunUntil(sim.Converged, 20_000), "did not converge");
        AssertConsistent(sim);
    }

    [Theory]
    [InlineData(3, 101)]
    [InlineData(3, 102)]
    [InlineData(3, 103)]
    [InlineData(5, 201)]
    [InlineData(5, 202)]
    [InlineData(5, 203)]
    public void ChaosLosesNoAcknowledgedEntryAndConverges(int size, int seed)
    {
        var sim = new RaftSimulation(size, seed) { DropRate = 0.05, DuplicateRate = 0.02, MinDelayMs = 1, MaxDelayMs = 40 };
        var random = new Random(seed);
        for (var step = 0; step < 120; step++)
        {
            // Half a second of traffic, then one fault or repair.
            for (var i = 0; i < 25; i++)
            {
                sim.Propose();
                sim.RunFor(20);
            }
            var victim = sim.Nodes[random.Next(size)];
            switch (random.Next(10))
            {
                case 0 or 1:
                    if (victim.Node is not null)
                    {
                        victim.Crash();
                    }
                    break;
                case 2 or 3:
                    foreach (var node in sim.Nodes.Where(n => n.Node is null))
                    {
                        node.Start();
                    }
                    break;
                case 4:
                    sim.Isolate(victim.Index);
                    break;
                case 5:
                    sim.Cut(victim.Index, random.Next(size));
                    break;
                case 6 or 7:
                    sim.Heal();
                    break;
                case 8 when random.Next(4) == 0:
                    // Power cut of every node at once.
                    foreach (var node in sim.Nodes.Where(n => n.Node is not null))
                    {
                        node.Crash();
                    }
                    foreach (var node in sim.Nodes)
                    {
                        node.Start();
                    }
                    break;
                default:
                    if (sim.Leader() is { } leader)
                    {
                        leader.Node!.StepDown(sim.Now);
                    }
                    break;
            }
        }
        sim.Heal();
        sim.DropRate = 0;
        sim.DuplicateRate = 0;
        foreach (var node in sim.Nodes.Where(n => n.Node is null))
        {
            node.Start();
        }
        Assert.True(sim.RunUntil(sim.Converged, 60_000), "did not converge after healing");
        AssertConsistent(sim);
        Assert.True(sim.Acked.Count > sim.Proposed / 4, $"only {sim.Acked.Count} of {sim.Proposed} acknowledged");
    }

    private static void AssertConsistent(RaftSimulation sim)
    {
        Assert.Empty(sim.Violations);
        var reference = sim.Nodes[0].Applied;
        foreach (var node in sim.Nodes)
        {
            Assert.Equal(reference, node.Applied);
        }
        Assert.Equal(reference.Count, reference.Distinct().Count());
        var present = reference.ToHashSet();
        var missing = sim.Acked.Where(v => !present.Contains(v)).ToList();
        Assert.True(missing.Count == 0, $"acknowledged but lost: {string.Join(',', missing.Take(10))}");
    }
}
