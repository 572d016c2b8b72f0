namespace Nats.LoadBench.Scenarios;

internal static class Drain
{
    /// <summary>Waits until the receivers report the expected total or stop making progress.
    /// Timing comes from the receivers' own timestamps, so this poll does not affect the figure.</summary>
    public static long Wait(Func<long> received, long expected, Func<bool>? broken = null, int stallTimeoutMs = 10_000)
    {
        long last = -1;
        long since = Environment.TickCount64;
        while (true)
        {
            long got = received();
            if (got >= expected || (broken?.Invoke() ?? false))
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

            Thread.Sleep(2);
        }
    }
}
