using System.Diagnostics;
using Nats.LoadBench.Kit;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// JetStream publish through NATS.Net: Window = 1 waits for each ack (sync), larger windows keep
/// that many acks outstanding. Counted: acks; the stream must then hold exactly that many messages
/// (for a replicated stream, as its leader reports).
/// </summary>
internal sealed class JsPublishScenario : Scenario
{
    public int Window { get; init; } = 1;

    public StreamConfigStorage Storage { get; init; } = StreamConfigStorage.Memory;

    /// <summary>Replicas of the stream (above 1 on a cluster row); the publisher then connects to the stream's leader.</summary>
    public int Replicas { get; init; } = 1;

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        var js = await JetStreamKit.ContextAsync(run, "js-pub");
        string subject = run.Subject("js");
        string name = $"BENCH{run.Settings.RunId}";
        INatsJSStream stream;
        if (Replicas > 1)
        {
            int leader = await JetStreamKit.CreateReplicatedStreamAsync(js, new StreamConfig(name, [subject]) { Storage = Storage, NumReplicas = Replicas }, run);
            js = await JetStreamKit.ContextAsync(run, "js-pub-leader", leader);
            stream = await js.GetStreamAsync(name);
        }
        else
        {
            stream = await JetStreamKit.CreateStreamAsync(js, name, subject, Storage);
        }

        long start = Stopwatch.GetTimestamp();
        long acked = await JetStreamKit.PublishAsync(js, subject, Frames.Payload(PayloadSize), Window, run.Settings.Count, run.Settings.DeadlineFrom(start), run);
        long end = Stopwatch.GetTimestamp();
        long expected = run.Settings.CountMode ? run.Settings.Count : acked;
        long stored = await JetStreamKit.StoredAsync(stream);
        if (stored != acked)
        {
            throw new RowFailedException($"stream holds {stored:N0} messages, {acked:N0} were acknowledged");
        }

        return new Measurement(acked, (end - start) / (double)Stopwatch.Frequency, expected);
    }
}
