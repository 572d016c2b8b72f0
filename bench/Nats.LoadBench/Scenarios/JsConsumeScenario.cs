using System.Diagnostics;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Nats.LoadBench.Kit;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Reads a memory stream pre-filled with the run's count (or as much as the run's duration
/// publishes) through NATS.Net: an ordered consumer, or a durable pull consumer fetching batches
/// with every message acked explicitly. Counted: messages consumed, first to last.
/// </summary>
internal sealed class JsConsumeScenario : Scenario
{
    public bool Ordered { get; init; }

    public int Batch { get; init; } = 500;

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        var js = await JetStreamKit.ContextAsync(run, "js-consume");
        string subject = run.Subject("jsc");
        var stream = await JetStreamKit.CreateStreamAsync(js, $"BENCHC{run.Settings.RunId}", subject, StreamConfigStorage.Memory);
        long prefillDeadline = run.Settings.DeadlineFrom(Stopwatch.GetTimestamp());
        long stored = await JetStreamKit.PublishAsync(js, subject, Frames.Payload(PayloadSize), 256, run.Settings.Count, prefillDeadline, run);
        if (await JetStreamKit.StoredAsync(stream) != stored)
        {
            throw new RowFailedException($"prefill: the stream does not hold the {stored:N0} acknowledged messages");
        }

        var consumer = Ordered
            ? await js.CreateOrderedConsumerAsync(stream.Info.Config.Name!)
            : await js.CreateOrUpdateConsumerAsync(stream.Info.Config.Name!, new ConsumerConfig("bench") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        long got = 0;
        long start = Stopwatch.GetTimestamp();
        long last = start;
        using var stop = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        if (Ordered)
        {
            await foreach (var msg in consumer.ConsumeAsync(PayloadLength.Instance, cancellationToken: stop.Token))
            {
                got += msg.Data == PayloadSize ? 1 : 0;
                if (got >= stored || run.Broken)
                {
                    break;
                }
            }
        }
        else
        {
            while (got < stored && !run.Broken && !stop.IsCancellationRequested)
            {
                await foreach (var msg in consumer.FetchAsync(new NatsJSFetchOpts { MaxMsgs = Batch, Expires = TimeSpan.FromSeconds(5) }, PayloadLength.Instance, stop.Token))
                {
                    await msg.AckAsync(cancellationToken: stop.Token);
                    got += msg.Data == PayloadSize ? 1 : 0;
                }
            }
        }

        last = Stopwatch.GetTimestamp();
        return new Measurement(got, (last - start) / (double)Stopwatch.Frequency, stored);
    }
}
