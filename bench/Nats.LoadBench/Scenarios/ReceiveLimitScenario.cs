using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// The receive side of the client against a source that streams MSG frames without doing any
/// server work: shows how many deliveries per second the load generator can count, which must
/// sit far above what any server delivers for the pub/sub figures to be the server's.
/// </summary>
internal sealed class ReceiveLimitScenario : Scenario
{
    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        using var conn = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-recv-limit");
        var counter = new CountingHandler(PayloadSize);
        conn.Send("SUB bench.src 1\r\n");
        conn.Flush(10_000);
        long start = Stopwatch.GetTimestamp();
        conn.StartReader(counter);
        if (s.CountMode)
        {
            Drain.Wait(() => counter.Count, s.Count, () => conn.Closed);
        }
        else
        {
            // The source never stops, so the window is simply the run's duration.
            Thread.Sleep(s.Duration);
        }

        long got = counter.Count;
        double seconds = (counter.LastTicks - start) / (double)Stopwatch.Frequency;
        long expected = s.CountMode && got < s.Count ? s.Count : got + counter.WrongSize;
        return new Measurement(got, seconds, expected);
    }
}
