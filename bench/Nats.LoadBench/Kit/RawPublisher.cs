using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Scenarios;

namespace Nats.LoadBench.Kit;

/// <summary>
/// The throughput rows' publishers: pre-encoded PUB frames written ~64 KiB per socket write on a
/// dedicated thread each, as fast as the server reads them. NATS.Net's awaited PublishAsync loop
/// reaches about 1M msg/s of 16 B here, nats.go 6-9M, this 10x more than nats.go into a sink, so the
/// fast-producer case users hit is what the servers face. No pacing: holding a fast publisher back
/// to its subscribers' pace is the server's job.
/// </summary>
internal static class RawPublisher
{
    /// <summary>Runs every publisher to the end of the run, then flushes each (PING/PONG).</summary>
    public static async Task<(long Published, long StartTicks, long FlushedTicks)> RunAsync(IReadOnlyList<RawConnection> publishers, byte[] frame, RunSettings settings)
    {
        long start = Stopwatch.GetTimestamp();
        var tasks = publishers.Select((conn, i) => Task.Factory.StartNew(() =>
        {
            try
            {
                long sent = Blast(conn, frame, settings, start);
                conn.Flush(180_000);
                return (sent, Stopwatch.GetTimestamp());
            }
            catch (Exception ex) when (ex is IOException or TimeoutException or ObjectDisposedException)
            {
                throw new RowFailedException($"publisher pub{i} connection cut ({conn.LastError ?? ex.Message})", ex);
            }
        }, TaskCreationOptions.LongRunning)).ToArray();
        var results = await Task.WhenAll(tasks);
        return (results.Sum(r => r.Item1), start, results.Max(r => r.Item2));
    }

    private static long Blast(RawConnection conn, byte[] frame, RunSettings settings, long startTicks)
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

            conn.Send(chunk.AsSpan(0, n * frame.Length));
            sent += n;
        }

        return sent;
    }
}
