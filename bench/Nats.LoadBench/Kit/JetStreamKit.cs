using Nats.LoadBench.Client;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Kit;

/// <summary>
/// JetStream setup shared by the JetStream rows, through NATS.Net's JetStream context. A server
/// without JetStream (no "jetstream" in INFO, or an API that does not answer) is a missing feature,
/// reported as "not implemented" for ours rather than as a failure.
/// </summary>
internal static class JetStreamKit
{
    public static async Task<NatsJSContext> ContextAsync(RunContext run, string role)
    {
        var conn = await run.ConnectAsync(role);
        if (conn.ServerInfo is not { JetStreamAvailable: true })
        {
            throw new SetupException("no jetstream in the server's INFO");
        }

        return new NatsJSContext(conn);
    }

    public static async Task<INatsJSStream> CreateStreamAsync(NatsJSContext js, string name, string subject, StreamConfigStorage storage)
    {
        try
        {
            return await js.CreateStreamAsync(new StreamConfig(name, [subject]) { Storage = storage });
        }
        catch (Exception ex) when (ex is NatsException or TimeoutException)
        {
            throw new SetupException($"stream create: {ex.Message}", ex);
        }
    }

    /// <summary>Messages the stream really holds: a figure only counts if the server stored what it acknowledged.</summary>
    public static async Task<long> StoredAsync(INatsJSStream stream)
    {
        await stream.RefreshAsync();
        return stream.Info.State.Messages;
    }

    /// <summary>Publishes count messages (or for the run's duration) with up to window acks outstanding; returns the acks.</summary>
    public static async Task<long> PublishAsync(NatsJSContext js, string subject, byte[] payload, int window, long count, long deadlineTicks, RunContext run)
    {
        var inFlight = new Queue<ValueTask<PubAckResponse>>(window);
        long acked = 0;
        long sent = 0;
        while ((count > 0 ? sent < count : System.Diagnostics.Stopwatch.GetTimestamp() < deadlineTicks) && !run.Broken)
        {
            if (inFlight.Count == window)
            {
                acked += Ack(await inFlight.Dequeue());
            }

            inFlight.Enqueue(js.PublishAsync(subject, payload));
            sent++;
        }

        while (inFlight.Count > 0)
        {
            acked += Ack(await inFlight.Dequeue());
        }

        return acked;
    }

    private static int Ack(PubAckResponse ack)
    {
        if (!ack.IsSuccess())
        {
            throw new RowFailedException($"publish ack carried an error: {ack.Error?.Description}");
        }

        return 1;
    }
}
