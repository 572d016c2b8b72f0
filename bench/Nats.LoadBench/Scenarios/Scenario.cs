using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>A named table row that can run against any endpoint speaking the NATS protocols.</summary>
internal abstract class Scenario
{
    public required string Name { get; init; }

    public required string Section { get; init; }

    public required string Title { get; init; }

    public required int PayloadSize { get; init; }

    public Features Features { get; init; }

    public bool HasLatency { get; init; }

    /// <summary>Runs against the in-process loopback sink instead of the two servers.</summary>
    public bool IsLimit { get; init; }

    /// <summary>Message count used by the smoke mode.</summary>
    public long SmokeCount { get; init; } = 20_000;

    public abstract Measurement Run(Endpoint endpoint, RunSettings settings);

    /// <summary>Any failure while preparing a run means the feature is unavailable, not slow.</summary>
    protected static T Setup<T>(string what, Func<T> action)
    {
        try
        {
            return action();
        }
        catch (SetupException)
        {
            throw;
        }
        catch (Exception ex)
        {
            throw new SetupException($"{what}: {ex.Message}", ex);
        }
    }

    protected static void Setup(string what, Action action) => Setup(what, () =>
    {
        action();
        return 0;
    });
}
