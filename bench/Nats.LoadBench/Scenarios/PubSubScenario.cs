using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// P publishers and S subscribers on one subject over a chosen transport. S = 0 is the
/// pub-only row: msg/s counts published messages, and the run ends when a PING round trip
/// proves the server has consumed them. Otherwise msg/s counts deliveries to all subscribers.
/// </summary>
internal sealed class PubSubScenario : Scenario
{
    public int Publishers { get; init; } = 1;

    public int Subscribers { get; init; }

    public Transport Transport { get; init; } = Transport.Plain;

    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        int port = Transport == Transport.WebSocket ? ep.WsPort : ep.Port;
        if (port == 0)
        {
            throw new SetupException($"no {Transport} listener configured");
        }

        string subject = $"bench.ps.{s.RunId}";
        var subs = new List<NatsConnection>();
        var pubs = new List<NatsConnection>();
        try
        {
            // Pub-only rows in count (smoke) mode get one verifying subscriber, so the count check proves
            // the server parsed every PUB rather than only that it answered the final PING.
            int verifiers = Subscribers == 0 && s.CountMode && !IsLimit ? 1 : 0;
            var handlers = new CountingHandler[Subscribers + verifiers];
            for (int i = 0; i < handlers.Length; i++)
            {
                var c = Connect(ep, port, $"sub{i}");
                subs.Add(c);
                handlers[i] = new CountingHandler(PayloadSize);
                Setup("subscribe", () =>
                {
                    c.Send($"SUB {subject} 1\r\n");
                    c.Flush(10_000);
                });
                c.StartReader(handlers[i]);
            }

            for (int i = 0; i < Publishers; i++)
            {
                pubs.Add(Connect(ep, port, $"pub{i}"));
            }

            var frame = Frames.Pub(subject, null, PayloadSize);
            long Received()
            {
                long t = 0;
                foreach (var h in handlers)
                {
                    t += h.Count;
                }

                return t;
            }

            var gate = handlers.Length > 0 ? new FlowGate(handlers.Length, FlowGate.WindowFor(frame.Length), Received, () => subs.Any(c => c.Closed)) : null;
            var sent = new long[Publishers];
            var flushed = new long[Publishers];
            var errors = new Exception?[Publishers];
            long start = Stopwatch.GetTimestamp();
            var threads = new Thread[Publishers];
            for (int i = 0; i < Publishers; i++)
            {
                int idx = i;
                threads[i] = new Thread(() =>
                {
                    try
                    {
                        var c = pubs[idx];
                        sent[idx] = Blaster.Run(c.Send, frame, s, start, gate);
                        c.Flush(60_000);
                        flushed[idx] = Stopwatch.GetTimestamp();
                    }
                    catch (Exception ex)
                    {
                        errors[idx] = ex;
                    }
                }) { Name = $"loadbench-pub{i}", IsBackground = true };
                threads[i].Start();
            }

            foreach (var t in threads)
            {
                t.Join();
            }

            var err = errors.FirstOrDefault(e => e != null);
            if (err != null)
            {
                throw new InvalidOperationException($"publisher failed: {err.Message}", err);
            }

            long published = sent.Sum();
            if (Subscribers == 0)
            {
                double secs = (flushed.Max() - start) / (double)Stopwatch.Frequency;
                long seen = verifiers == 0 ? published : Drain.Wait(Received, published, () => subs.Any(c => c.Closed));
                return new Measurement(seen, secs, published);
            }

            long expected = published * Subscribers;
            long got = Drain.Wait(Received, expected, () => subs.Any(c => c.Closed));
            long wrong = handlers.Sum(h => h.WrongSize);
            long end = handlers.Max(h => h.LastTicks);
            double seconds = (Math.Max(end, start + 1) - start) / (double)Stopwatch.Frequency;
            return new Measurement(got + wrong, seconds, expected);
        }
        finally
        {
            foreach (var c in pubs.Concat(subs))
            {
                c.Dispose();
            }
        }
    }

    private NatsConnection Connect(Endpoint ep, int port, string name)
    {
        var transport = Transport;
        if (transport == Transport.Tls && !ep.Tls)
        {
            throw new SetupException("TLS not configured for this endpoint");
        }

        return NatsConnection.Connect(ep.Host, port, transport, $"loadbench-{Name}-{name}");
    }
}
