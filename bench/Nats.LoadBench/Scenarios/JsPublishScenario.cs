using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// JetStream publish with acknowledgements: Window = 1 is the synchronous row (wait for each
/// ack), larger windows keep that many acks outstanding. Counts only successful acks and
/// checks the stream holds exactly that many messages afterwards.
/// </summary>
internal sealed class JsPublishScenario : Scenario
{
    public int Window { get; init; } = 1;

    public string Storage { get; init; } = "memory";

    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        string stream = $"BENCH{s.RunId}";
        string subject = $"bench.js.{s.RunId}";
        using var api = Setup("JetStream API", () => new JsApi(ep));
        Setup("stream create", () => api.CreateStream(stream, subject, Storage));
        using var conn = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-jspub");
        var acks = new AckCounter();
        conn.SetHandler(acks);
        conn.Send($"SUB _INBOX.ack.{s.RunId} 1\r\n");
        conn.Flush(10_000);

        var start = Stopwatch.GetTimestamp();
        long sent = Publish(conn, acks, Frames.Pub(subject, $"_INBOX.ack.{s.RunId}", PayloadSize), s, start);
        long end = Stopwatch.GetTimestamp();
        if (acks.Errors > 0)
        {
            throw new InvalidOperationException($"{acks.Errors} publish acks carried an error");
        }

        long stored = api.StreamMessages(stream);
        // A figure only counts if the server really stored what it acknowledged.
        long expected = stored == acks.Ok ? sent : stored;
        return new Measurement(acks.Ok, (end - start) / (double)Stopwatch.Frequency, expected);
    }

    /// <summary>Fills a stream for the consumer rows: count messages, or as many as fit in the
    /// run's duration. Returns how many the server acknowledged and stored.</summary>
    internal static long Prefill(Endpoint ep, JsApi api, string stream, string subject, int payload, RunSettings s)
    {
        using var conn = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-jsfill");
        var acks = new AckCounter();
        conn.SetHandler(acks);
        conn.Send("SUB _INBOX.fill 1\r\n");
        conn.Flush(10_000);
        PublishWindowed(conn, acks, Frames.Pub(subject, "_INBOX.fill", payload), s, Stopwatch.GetTimestamp(), 256);
        long stored = api.StreamMessages(stream);
        if (acks.Errors > 0 || stored != acks.Ok)
        {
            throw new InvalidOperationException($"prefill stored {stored} of {acks.Ok} acked ({acks.Errors} errors)");
        }

        return stored;
    }

    /// <summary>Keeps up to Window publishes in flight, writing every free slot in one send.</summary>
    private long Publish(NatsConnection conn, AckCounter acks, byte[] frame, RunSettings s, long start) =>
        PublishWindowed(conn, acks, frame, s, start, Window);

    internal static long PublishWindowed(NatsConnection conn, AckCounter acks, byte[] frame, RunSettings s, long start, int window)
    {
        long deadline = s.DeadlineFrom(start);
        var batch = new byte[frame.Length * window];
        for (int i = 0; i < window; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }

        long sent = 0;
        while (true)
        {
            bool more = s.CountMode ? sent < s.Count : Stopwatch.GetTimestamp() < deadline;
            if (!more)
            {
                break;
            }

            long inFlight = sent - acks.Total;
            long room = window - inFlight;
            if (s.CountMode)
            {
                room = Math.Min(room, s.Count - sent);
            }

            if (room > 0)
            {
                conn.Send(batch.AsSpan(0, (int)room * frame.Length));
                sent += room;
            }

            if (!conn.Pump())
            {
                throw new IOException($"connection closed ({conn.LastError ?? "no -ERR"})");
            }
        }

        while (acks.Total < sent)
        {
            if (!conn.Pump())
            {
                throw new IOException($"connection closed ({conn.LastError ?? "no -ERR"})");
            }
        }

        return sent;
    }

    internal sealed class AckCounter : IMsgHandler
    {
        public long Ok { get; private set; }

        public long Errors { get; private set; }

        public long Total => Ok + Errors;

        public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
            // A PubAck is {"stream":..,"seq":N}; anything else (error JSON, 503 status) is a failure.
            if (payload.IndexOf("\"seq\""u8) >= 0 && payload.IndexOf("\"error\""u8) < 0)
            {
                Ok++;
            }
            else
            {
                Errors++;
            }
        }

        public void OnBatchEnd()
        {
        }
    }
}
