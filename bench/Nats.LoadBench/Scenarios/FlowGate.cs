namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Keeps publishers at most a bounded number of deliveries ahead of the subscribers, so a
/// server is measured on sustained delivery rather than on how much it can buffer before
/// cutting a "slow consumer". When subscribers keep up the gate never closes.
/// </summary>
internal sealed class FlowGate(int fanout, long windowDeliveries, Func<long> received, Func<bool>? broken = null)
{
    private long _published;

    public long Published => Interlocked.Read(ref _published);

    public void Add(long n) => Interlocked.Add(ref _published, n);

    public void WaitForRoom(int stallTimeoutMs = 30_000)
    {
        long last = -1;
        long stallSince = Environment.TickCount64;
        while (true)
        {
            long got = received();
            if ((Published * fanout) - got <= windowDeliveries)
            {
                return;
            }

            if (broken?.Invoke() == true)
            {
                throw new IOException($"a subscriber's connection closed at {got} of {Published * fanout} deliveries");
            }

            if (got != last)
            {
                last = got;
                stallSince = Environment.TickCount64;
            }
            else if (Environment.TickCount64 - stallSince > stallTimeoutMs)
            {
                throw new TimeoutException($"subscribers stalled at {got} of {Published * fanout} deliveries");
            }

            // A millisecond is tiny next to a window of megabytes, and sleeping leaves both cores to the server.
            Thread.Sleep(1);
        }
    }

    /// <summary>Deliveries allowed in flight: about 8 MiB of wire data, well under Go's 64 MiB slow-consumer limit.</summary>
    public static long WindowFor(int frameBytes) => Math.Max(64, (8L << 20) / frameBytes);
}
