using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

/// <summary>
/// The hand-over a leader makes before a clean shutdown (Go's stepdownRaftNodes; what made a rolling restart of ours
/// stall publishing for an election timeout before, #26): after StepDown another member leads well within the
/// election timeout, holding every acknowledged entry, and the group goes on without the old leader.
/// </summary>
public class RaftHandOverTests
{
    [Theory]
    [InlineData(3, 21)]
    [InlineData(3, 22)]
    [InlineData(5, 23)]
    public void StepDownHandsOverWithinAHeartbeatAndKeepsEveryAcknowledgedEntry(int size, int seed)
    {
        var sim = new RaftSimulation(size, seed);
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 20_000), "no leader elected");
        for (var i = 0; i < 100; i++)
        {
            sim.Propose();
            sim.RunFor(3);
        }
        Assert.True(sim.RunUntil(() => sim.Acked.Count == 100, 10_000), "the first entries were not acknowledged");
        var old = sim.Leader()!;
        var handedAt = sim.Now;
        Assert.True(old.Node!.StepDown(sim.Now));
        old.ScheduleFlush();
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != old, sim.Options.HeartbeatMs),
            $"no other leader within a heartbeat of the hand-over (election timeout {sim.Options.ElectionMinMs} ms)");
        var next = sim.Leader()!;
        Assert.True(sim.Now - handedAt < sim.Options.ElectionMinMs);
        // The old leader shuts down now, as the server does after its hand-over.
        old.Crash();
        for (var i = 0; i < 50; i++)
        {
            sim.Propose();
            sim.RunFor(3);
        }
        Assert.True(sim.RunUntil(() => sim.Acked.Count == 150, 10_000), $"only {sim.Acked.Count} of 150 acknowledged after the hand-over");
        Assert.Same(next, sim.Leader());
        old.Start();
        Assert.True(sim.RunUntil(sim.Converged, 20_000), "did not converge");
        Assert.Empty(sim.Violations);
        foreach (var node in sim.Nodes)
        {
            Assert.Equal(sim.Nodes[0].Applied, node.Applied);
        }
        Assert.Equal(150, sim.Nodes[0].Applied.Distinct().Count());
    }
    /// <summary>
    /// The hand-over of a rolling restart right after a member came back: that member may still be copying messages
    /// (a stream replica behind the leader's snapshot never campaigns), so the leader passes it by when told so, and
    /// names the other current follower.
    /// </summary>
    [Theory]
    [InlineData(31)]
    [InlineData(32)]
    [InlineData(33)]
    public void StepDownPassesOverAFollowerThatCannotLeadYet(int seed)
    {
        var sim = new RaftSimulation(3, seed);
        var old = Acknowledge(sim, 30);
        var unready = sim.Nodes.First(n => n != old);
        var other = sim.Nodes.First(n => n != old && n != unready);
        var handedAt = sim.Now;
        Assert.True(old.Node!.StepDown(sim.Now, peer => peer == unready.Id));
        old.ScheduleFlush();
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != old, sim.Options.HeartbeatMs), "no other leader within a heartbeat");
        Assert.Same(other, sim.Leader());
        Assert.True(sim.Now - handedAt < sim.Options.ElectionMinMs);
        Assert.Empty(sim.Violations);
    }

    /// <summary>
    /// A hand-over to a member that turns out unable to lead (it never campaigns): the other follower campaigns once
    /// <see cref="RaftOptions.HandOverFallbackMs"/> has passed, well before an election timeout, and the old leader may
    /// already be gone.
    /// </summary>
    [Theory]
    [InlineData(41)]
    [InlineData(42)]
    [InlineData(43)]
    public void HandOverToAMemberThatCannotLeadFallsBackToAnotherWithinTheFallbackTime(int seed)
    {
        // The server's proportions (fallback a quarter of the shortest election timeout), scaled down.
        var sim = new RaftSimulation(3, seed, new RaftOptions
        {
            HeartbeatMs = 100,
            ElectionMinMs = 1000,
            ElectionMaxMs = 2250,
            LostQuorumMs = 2500,
            CatchupRetryMs = 100,
            MaxEntriesPerAppend = 20,
            SnapshotAfterEntries = 50,
            HandOverFallbackMs = 250,
        });
        var old = Acknowledge(sim, 30);
        var handedAt = sim.Now;
        foreach (var node in sim.Nodes.Where(n => n != old))
        {
            // Both look able to the leader; whichever it names never campaigns.
            node.Node!.Observer = true;
        }
        Assert.True(old.Node!.StepDown(sim.Now));
        old.ScheduleFlush();
        sim.RunFor(20);
        old.Crash();
        var named = sim.Nodes.First(n => n != old && n.Node!.Observer && n.Store.LastIndex > 0 && LastIsTransferTo(n));
        foreach (var node in sim.Nodes.Where(n => n != old && n != named))
        {
            node.Node!.Observer = false;
        }
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != old, sim.Options.HandOverFallbackMs + sim.Options.HeartbeatMs),
            $"no leader within {sim.Options.HandOverFallbackMs} ms (+ a heartbeat) of a hand-over to a member that cannot lead");
        Assert.NotSame(named, sim.Leader());
        Assert.True(sim.Now - handedAt < sim.Options.ElectionMinMs);
        Assert.Empty(sim.Violations);
    }

    private static bool LastIsTransferTo(SimNode node)
    {
        var entry = node.Store.EntryAt(node.Store.LastIndex);
        return entry.Type == RaftEntryType.LeaderTransfer && System.Text.Encoding.ASCII.GetString(entry.Data) == node.Id;
    }

    private static SimNode Acknowledge(RaftSimulation sim, int count)
    {
        Assert.True(sim.RunUntil(() => sim.Leader() is not null, 20_000), "no leader elected");
        for (var i = 0; i < count; i++)
        {
            sim.Propose();
            sim.RunFor(3);
        }
        Assert.True(sim.RunUntil(() => sim.Acked.Count == count, 10_000), "the first entries were not acknowledged");
        return sim.Leader()!;
    }
}
