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
}
