namespace Nats.LoadBench.Kit;

/// <summary>Waits for receivers to reach a total: returns at the total, at a cut, or after a long stall.</summary>
internal static class Drain
{
    /// <summary>Timing comes from the receivers' own timestamps, so this poll does not affect the figure.</summary>
    public static async Task<long> UntilAsync(Func<long> received, long expected, RunContext run, int stallTimeoutMs = 20_000)
    {
        long last = -1;
        long since = Environment.TickCount64;
        while (true)
        {
            long got = received();
            if (got >= expected || run.Broken)
            {
                return got;
            }

            if (got != last)
            {
                last = got;
                since = Environment.TickCount64;
            }
            else if (Environment.TickCount64 - since > stallTimeoutMs)
            {
                return got;
            }

            await Task.Delay(2);
        }
    }
}
