using System.Diagnostics;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// How long one measurement runs: either a wall-clock budget (full runs) or an exact message
/// count (smoke runs, where counts are verified). RunId keeps names unique across the warm-up
/// and measured runs that share one server.
/// </summary>
internal sealed record RunSettings(TimeSpan Duration, long Count, int RunId)
{
    public bool CountMode => Count > 0;

    public long DeadlineFrom(long startTicks) =>
        CountMode ? long.MaxValue : startTicks + (long)(Duration.TotalSeconds * Stopwatch.Frequency);
}
