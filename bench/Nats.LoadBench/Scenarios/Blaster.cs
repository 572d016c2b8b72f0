using System.Diagnostics;

namespace Nats.LoadBench.Scenarios;

/// <summary>The publish loop every throughput row shares: whole chunks of pre-encoded frames.</summary>
internal static class Blaster
{
    public static long Run(SendBytes send, byte[] frame, RunSettings settings, long startTicks, FlowGate? gate)
    {
        var (chunk, per) = Frames.Chunk(frame);
        long deadline = settings.DeadlineFrom(startTicks);
        long sent = 0;
        while (true)
        {
            int n = per;
            if (settings.CountMode)
            {
                long left = settings.Count - sent;
                if (left <= 0)
                {
                    break;
                }

                n = (int)Math.Min(per, left);
            }
            else if (Stopwatch.GetTimestamp() >= deadline)
            {
                break;
            }

            gate?.WaitForRoom();
            send(chunk.AsSpan(0, n * frame.Length));
            sent += n;
            gate?.Add(n);
        }

        return sent;
    }
}
