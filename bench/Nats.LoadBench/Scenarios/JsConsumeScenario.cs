using System.Diagnostics;
using System.Text;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Reads back a pre-filled memory stream. Ordered: an ephemeral push consumer with ack none
/// and no flow control, as an ordered consumer is at heart. Fetch: a durable pull consumer
/// with explicit acks, pulled in batches, every message acked. Time runs from the consumer
/// create (or first pull) to the last message.
/// </summary>
internal sealed class JsConsumeScenario : Scenario
{
    private const int FetchBatch = 500;

    public bool Ordered { get; init; }

    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        string stream = $"BENCH{s.RunId}";
        string subject = $"bench.jc.{s.RunId}";
        using var api = Setup("JetStream API", () => new JsApi(ep));
        Setup("stream create", () => api.CreateStream(stream, subject, "memory"));
        long total = JsPublishScenario.Prefill(ep, api, stream, subject, PayloadSize, s);
        using var conn = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-consumer");
        var inbox = $"_INBOX.cons.{s.RunId}";
        var handler = new ConsumerHandler(conn, PayloadSize, ackEach: !Ordered);
        conn.SetHandler(handler);
        conn.Send($"SUB {inbox} 1\r\n");
        conn.Flush(10_000);

        long start;
        if (Ordered)
        {
            start = Stopwatch.GetTimestamp();
            Setup("ordered consumer create", () => api.Request(
                $"$JS.API.CONSUMER.CREATE.{stream}",
                $"{{\"stream_name\":\"{stream}\",\"config\":{{\"deliver_subject\":\"{inbox}\",\"deliver_policy\":\"all\",\"ack_policy\":\"none\",\"replay_policy\":\"instant\",\"flow_control\":false,\"num_replicas\":1}}}}"));
            conn.PumpUntil(() => handler.Count >= total || handler.WrongSize > 0, 60_000);
        }
        else
        {
            const string durable = "DUR";
            Setup("durable consumer create", () => api.Request(
                $"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{durable}",
                $"{{\"stream_name\":\"{stream}\",\"config\":{{\"durable_name\":\"{durable}\",\"deliver_policy\":\"all\",\"ack_policy\":\"explicit\",\"ack_wait\":60000000000,\"max_ack_pending\":-1,\"replay_policy\":\"instant\",\"num_replicas\":1}}}}"));
            start = Stopwatch.GetTimestamp();
            while (handler.Count < total && handler.WrongSize == 0)
            {
                long batch = Math.Min(FetchBatch, total - handler.Count);
                long target = handler.Count + batch;
                var req = Encoding.ASCII.GetBytes($"{{\"batch\":{batch},\"expires\":10000000000}}");
                conn.Send([.. Encoding.ASCII.GetBytes($"PUB $JS.API.CONSUMER.MSG.NEXT.{stream}.{durable} {inbox} {req.Length}\r\n"), .. req, (byte)'\r', (byte)'\n']);
                conn.PumpUntil(() => handler.Count >= target || handler.WrongSize > 0, 30_000);
            }

            // Acks from the last batch must be processed before the count is final.
            conn.Flush(10_000);
        }

        long end = handler.LastTicks;
        return new Measurement(handler.Count + handler.WrongSize, (end - start) / (double)Stopwatch.Frequency, total);
    }

    /// <summary>Counts stream messages (status messages carry no payload and are skipped) and,
    /// for explicit-ack consumers, writes all acks of one read in a single send.</summary>
    private sealed class ConsumerHandler(NatsConnection conn, int payloadSize, bool ackEach) : IMsgHandler
    {
        private byte[] _acks = new byte[64 * 1024];
        private int _len;
        private long _seen;

        public long Count { get; private set; }

        public long WrongSize { get; private set; }

        public long LastTicks { get; private set; }

        public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
            if (payload.Length == 0 && headers.Length > 0)
            {
                return;
            }

            if (payload.Length != payloadSize)
            {
                WrongSize++;
                return;
            }

            Count++;
            if (ackEach && !reply.IsEmpty)
            {
                int need = 4 + reply.Length + 6;
                if (_len + need > _acks.Length)
                {
                    Array.Resize(ref _acks, Math.Max(_acks.Length * 2, _len + need));
                }

                var dst = _acks.AsSpan(_len);
                "PUB "u8.CopyTo(dst);
                reply.CopyTo(dst[4..]);
                " 0\r\n\r\n"u8.CopyTo(dst[(4 + reply.Length)..]);
                _len += need;
            }
        }

        public void OnBatchEnd()
        {
            if (Count != _seen)
            {
                _seen = Count;
                LastTicks = Stopwatch.GetTimestamp();
            }

            if (_len > 0)
            {
                conn.Send(_acks.AsSpan(0, _len));
                _len = 0;
            }
        }
    }
}
