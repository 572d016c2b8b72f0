using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Kit;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// A file stream at scale (issue 22), as <c>scripts/js-scale-probe.sh</c> measures it with nats.go, here
/// with NATS.Net: <see cref="Count"/> messages on 1,000 subjects published with 256 acks in flight, the
/// server stopped cleanly (SIGTERM), the store's size on disk, the server started again on the same
/// store, the time from that start to the first stream info answer, the resident set 2 s later, then a
/// durable pull consumer (fetch 1000, ack none) reading every message. The row's rate is that consume;
/// its RSS columns are the restarted server's.
/// </summary>
internal sealed class JsScaleScenario : Scenario
{
    private const int Subjects = 1000;

    /// <summary>Messages in the full run (smoke runs use <see cref="Scenario.SmokeCount"/>).</summary>
    public long Count { get; init; } = 2_000_000;

    public override bool WarmsUp => false;

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        long count = run.Settings.CountMode ? run.Settings.Count : Count;
        var js = await JetStreamKit.ContextAsync(run, "js-scale");
        const string stream = "SCALE";
        try
        {
            await js.CreateStreamAsync(new StreamConfig(stream, [$"{stream}.>"]) { Storage = StreamConfigStorage.File });
        }
        catch (Exception ex) when (ex is NatsException or TimeoutException)
        {
            throw new SetupException($"stream create: {ex.Message}", ex);
        }

        var names = Enumerable.Range(0, Subjects).Select(i => $"{stream}.{i}").ToArray();
        var payload = Frames.Payload(PayloadSize);
        long publishStart = Stopwatch.GetTimestamp();
        var inFlight = new Queue<ValueTask<PubAckResponse>>(256);
        for (long i = 0; i < count && !run.Broken; i++)
        {
            if (inFlight.Count == 256)
            {
                Ack(await inFlight.Dequeue());
            }

            inFlight.Enqueue(js.PublishAsync(names[i % Subjects], payload));
        }

        while (inFlight.Count > 0)
        {
            Ack(await inFlight.Dequeue());
        }

        double publishRate = count / Elapsed(publishStart);
        var restart = await run.RestartServerAsync(stream);
        run.ThrowIfBroken();

        js = await JetStreamKit.ContextAsync(run, "js-scale-restarted");
        var info = await js.GetStreamAsync(stream);
        if (info.Info.State.Messages != count)
        {
            throw new RowFailedException($"after the restart the stream holds {info.Info.State.Messages:N0} of {count:N0} messages");
        }

        var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("scale") { AckPolicy = ConsumerConfigAckPolicy.None, FilterSubject = $"{stream}.>" });
        using var stop = new CancellationTokenSource(TimeSpan.FromMinutes(5));
        long got = 0;
        long start = Stopwatch.GetTimestamp();
        while (got < count && !run.Broken && !stop.IsCancellationRequested)
        {
            int want = (int)Math.Min(1000, count - got);
            await foreach (var msg in consumer.FetchAsync(new NatsJSFetchOpts { MaxMsgs = want, Expires = TimeSpan.FromSeconds(10) }, PayloadLength.Instance, stop.Token))
            {
                got += msg.Data == PayloadSize ? 1 : 0;
            }
        }

        return new Measurement(got, Elapsed(start), count)
        {
            Scale = new ScaleFigures(publishRate, restart.DiskMb, restart.Seconds, restart.RssMb),
        };
    }

    private static double Elapsed(long start) => (Stopwatch.GetTimestamp() - start) / (double)Stopwatch.Frequency;

    private static void Ack(PubAckResponse ack)
    {
        if (!ack.IsSuccess())
        {
            throw new RowFailedException($"publish ack carried an error: {ack.Error?.Description}");
        }
    }
}
