using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// C clients each send one request at a time and wait for the reply (read inline on the same
/// thread, so no hand-off latency is added); S services answer, optionally as a queue group.
/// Every round trip lands in a preallocated array for P50/P99.
/// </summary>
internal sealed class ReqReplyScenario : Scenario
{
    public int Clients { get; init; } = 1;

    public int Services { get; init; } = 1;

    public bool QueueGroup { get; init; }

    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        string subject = $"bench.req.{s.RunId}";
        var conns = new List<NatsConnection>();
        try
        {
            for (int i = 0; i < Services; i++)
            {
                var svc = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, $"loadbench-svc{i}");
                conns.Add(svc);
                Setup("service subscribe", () =>
                {
                    svc.Send(QueueGroup ? $"SUB {subject} q 1\r\n" : $"SUB {subject} 1\r\n");
                    svc.Flush(10_000);
                });
                svc.StartReader(new Responder(svc));
            }

            var clients = new NatsConnection[Clients];
            var replies = new CountingHandler[Clients];
            for (int i = 0; i < Clients; i++)
            {
                var c = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, $"loadbench-req{i}");
                conns.Add(c);
                clients[i] = c;
                replies[i] = new CountingHandler(PayloadSize);
                Setup("client subscribe", () =>
                {
                    c.Send($"SUB _INBOX.lb.{s.RunId}.{i} 1\r\n");
                    c.Flush(10_000);
                });
                c.SetHandler(replies[i]);
            }

            long perClientCap = s.CountMode ? s.Count / Clients : (long)(s.Duration.TotalSeconds * 200_000 / Clients) + 1024;
            var lat = new long[Clients][];
            var done = new int[Clients];
            var errors = new Exception?[Clients];
            long start = Stopwatch.GetTimestamp();
            long deadline = s.DeadlineFrom(start);
            var threads = new Thread[Clients];
            for (int i = 0; i < Clients; i++)
            {
                int idx = i;
                lat[idx] = new long[perClientCap];
                threads[i] = new Thread(() =>
                {
                    try
                    {
                        done[idx] = RunClient(clients[idx], replies[idx], Frames.Pub(subject, $"_INBOX.lb.{s.RunId}.{idx}", PayloadSize), lat[idx], deadline);
                    }
                    catch (Exception ex)
                    {
                        errors[idx] = ex;
                    }
                }) { Name = $"loadbench-req{i}", IsBackground = true };
                threads[i].Start();
            }

            foreach (var t in threads)
            {
                t.Join();
            }

            long end = Stopwatch.GetTimestamp();
            var err = errors.FirstOrDefault(e => e != null);
            if (err != null)
            {
                throw new InvalidOperationException($"requester failed: {err.Message}", err);
            }

            long total = done.Sum();
            var all = new long[total];
            int k = 0;
            for (int i = 0; i < Clients; i++)
            {
                Array.Copy(lat[i], 0, all, k, done[i]);
                k += done[i];
            }

            Array.Sort(all);
            double toUs = 1_000_000.0 / Stopwatch.Frequency;
            double p50 = all.Length == 0 ? 0 : all[(int)(all.Length * 0.50)] * toUs;
            double p99 = all.Length == 0 ? 0 : all[Math.Min(all.Length - 1, (int)(all.Length * 0.99))] * toUs;
            long expected = s.CountMode ? perClientCap * Clients : total;
            long good = replies.Sum(r => r.Count);
            return new Measurement(good, (end - start) / (double)Stopwatch.Frequency, expected, p50, p99);
        }
        finally
        {
            foreach (var c in conns)
            {
                c.Dispose();
            }
        }
    }

    private static int RunClient(NatsConnection c, CountingHandler replies, byte[] request, long[] lat, long deadline)
    {
        int n = 0;
        while (n < lat.Length && Stopwatch.GetTimestamp() < deadline)
        {
            long target = replies.Count + 1;
            long t0 = Stopwatch.GetTimestamp();
            c.Send(request);
            while (replies.Count + replies.WrongSize < target)
            {
                if (!c.Pump())
                {
                    throw new IOException($"connection closed ({c.LastError ?? "no -ERR"})");
                }
            }

            lat[n++] = Stopwatch.GetTimestamp() - t0;
        }

        return n;
    }

    /// <summary>Echoes each request's payload to its reply subject, one socket write per read.</summary>
    private sealed class Responder(NatsConnection conn) : IMsgHandler
    {
        private byte[] _out = new byte[64 * 1024];
        private int _len;

        public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
            if (reply.IsEmpty)
            {
                return;
            }

            int need = 4 + reply.Length + 1 + 10 + 2 + payload.Length + 2;
            if (_len + need > _out.Length)
            {
                Array.Resize(ref _out, Math.Max(_out.Length * 2, _len + need));
            }

            var dst = _out.AsSpan(_len);
            "PUB "u8.CopyTo(dst);
            int p = 4;
            reply.CopyTo(dst[p..]);
            p += reply.Length;
            dst[p++] = (byte)' ';
            payload.Length.TryFormat(dst[p..], out int w, default, System.Globalization.CultureInfo.InvariantCulture);
            p += w;
            dst[p++] = (byte)'\r';
            dst[p++] = (byte)'\n';
            payload.CopyTo(dst[p..]);
            p += payload.Length;
            dst[p++] = (byte)'\r';
            dst[p++] = (byte)'\n';
            _len += p;
        }

        public void OnBatchEnd()
        {
            if (_len > 0)
            {
                conn.Send(_out.AsSpan(0, _len));
                _len = 0;
            }
        }
    }
}
