using Nats.LoadBench.Kit;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// A named table row. A row is one small class: it connects what it needs through the
/// <see cref="RunContext"/> (NATS.Net clients, raw fast publishers), does its work for
/// <see cref="RunContext.Settings"/> (a duration, or an exact count in smoke mode) and returns what
/// arrived next to what should have. Lost messages, cut connections and server errors fail the run
/// in the runner, the same way for every row.
/// </summary>
internal abstract class Scenario
{
    public required string Name { get; init; }

    public required string Section { get; init; }

    public required string Title { get; init; }

    public required int PayloadSize { get; init; }

    /// <summary>Listeners and subsystems the servers are started with for this row.</summary>
    public Features Features { get; init; }

    /// <summary>Extra server configuration for this row, the same text for both servers (e.g. "max_pending: 1MB").</summary>
    public string? ServerConfig { get; init; }

    /// <summary>Lines added inside our server's <c>jetstream {}</c> block only, for options Go 2.9.10 does not
    /// parse but has as a fixed behaviour (e.g. <c>sync_interval: "2m"</c>, Go's built-in sync policy).</summary>
    public string? OursJetStreamConfig { get; init; }

    public bool HasLatency { get; init; }

    /// <summary>Servers in the row's cluster (1: a single server, no routes).</summary>
    public int ClusterSize { get; init; } = 1;

    /// <summary>How the row's servers are joined when <see cref="ClusterSize"/> is above 1 (gateway and leaf rows: 2 servers).</summary>
    public ClusterLink Link { get; init; } = ClusterLink.Routes;

    /// <summary>Runs against the in-process loopback sink instead of the two servers.</summary>
    public bool IsLimit { get; init; }

    /// <summary>Message count used by the smoke mode.</summary>
    public long SmokeCount { get; init; } = 20_000;

    /// <summary>Full runs measure a warm server after a short warm-up on it; a row that stops and
    /// restarts its server (scale rows) has nothing to warm, and one that kills a server cannot run twice on it.</summary>
    public virtual bool WarmsUp => true;

    public abstract Task<Measurement> RunAsync(RunContext run);
}
