using System.Diagnostics;
using Nats.LoadBench.Kit;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Scenarios;

/// <summary>How a consume row reads the stream.</summary>
internal enum ConsumeKind
{
    /// <summary>NATS.Net's ordered consumer (ephemeral, ack none, recreated on gaps).</summary>
    Ordered,

    /// <summary>A durable pull consumer read with FetchAsync batches.</summary>
    Fetch,

    /// <summary>A durable push consumer (ack none, flow control) read with NATS.Net's push ConsumeAsync.</summary>
    Push,
}

/// <summary>
/// Reads a memory or file stream pre-filled with the run's count (or as much as the run's duration
/// publishes) through NATS.Net: an ordered consumer, a durable pull consumer fetching batches
/// (every message acked explicitly, or the last of each batch with ack-all), or a push consumer
/// with ack none. Counted: messages consumed, first to last.
/// </summary>
internal sealed class JsConsumeScenario : Scenario
{
    public ConsumeKind Kind { get; init; } = ConsumeKind.Fetch;

    public int Batch { get; init; } = 500;

    /// <summary>Fetch rows: ack policy all, one ack for the last message of each batch.</summary>
    public bool AckAll { get; init; }

    /// <summary>Fetch rows: ack policy none, nothing acknowledged.</summary>
    public bool AckNone { get; init; }

    /// <summary>Users mostly keep file streams, whose reads go through the block store, not arrays.</summary>
    public StreamConfigStorage Storage { get; init; } = StreamConfigStorage.Memory;

    /// <summary>Replicas of the stream (above 1 on a cluster row): the clients then connect to the stream's leader, and a
    /// durable consumer's client to the consumer's leader.</summary>
    public int Replicas { get; init; } = 1;

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        var js = await JetStreamKit.ContextAsync(run, "js-consume");
        string subject = run.Subject("jsc");
        string name = $"BENCHC{run.Settings.RunId}";
        INatsJSStream stream;
        int at = 0;
        if (Replicas > 1)
        {
            at = await JetStreamKit.CreateReplicatedStreamAsync(js, new StreamConfig(name, [subject]) { Storage = Storage, NumReplicas = Replicas }, run);
            js = await JetStreamKit.ContextAsync(run, "js-consume-leader", at);
            stream = await js.GetStreamAsync(name);
        }
        else
        {
            stream = await JetStreamKit.CreateStreamAsync(js, name, subject, Storage);
        }

        long prefillDeadline = run.Settings.DeadlineFrom(Stopwatch.GetTimestamp());
        long stored = await JetStreamKit.PublishAsync(js, subject, Frames.Payload(PayloadSize), 256, run.Settings.Count, prefillDeadline, run);
        if (await JetStreamKit.StoredAsync(stream) != stored)
        {
            throw new RowFailedException($"prefill: the stream does not hold the {stored:N0} acknowledged messages");
        }

        string streamName = stream.Info.Config.Name!;
        using var stop = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        long start = Stopwatch.GetTimestamp();
        long got = Kind switch
        {
            ConsumeKind.Ordered => await OrderedAsync(js, streamName, stored, run, stop.Token),
            ConsumeKind.Push => await PushAsync(js, streamName, stored, run, stop.Token),
            _ => await FetchAsync(await DurableAsync(js, streamName, at, run, stop.Token), stored, run, stop),
        };
        long last = Stopwatch.GetTimestamp();
        return new Measurement(got, (last - start) / (double)Stopwatch.Frequency, stored);
    }

    private async Task<long> OrderedAsync(NatsJSContext js, string streamName, long stored, RunContext run, CancellationToken token)
    {
        var consumer = await js.CreateOrderedConsumerAsync(streamName, cancellationToken: token);
        long got = 0;
        await foreach (var msg in consumer.ConsumeAsync(PayloadLength.Instance, cancellationToken: token))
        {
            got += msg.Data == PayloadSize ? 1 : 0;
            if (got >= stored || run.Broken)
            {
                break;
            }
        }

        return got;
    }

    /// <summary>The durable pull consumer, through a client on its leader (a replicated consumer may lead elsewhere than its stream).</summary>
    private async Task<INatsJSConsumer> DurableAsync(NatsJSContext js, string streamName, int at, RunContext run, CancellationToken token)
    {
        var policy = AckNone ? ConsumerConfigAckPolicy.None : AckAll ? ConsumerConfigAckPolicy.All : ConsumerConfigAckPolicy.Explicit;
        var consumer = await js.CreateOrUpdateConsumerAsync(streamName, new ConsumerConfig("bench") { AckPolicy = policy }, token);
        if (Replicas > 1)
        {
            int leader = JetStreamKit.LeaderIndex(consumer.Info.Cluster?.Leader, run);
            if (leader != at)
            {
                var there = await JetStreamKit.ContextAsync(run, "js-consume-consumer-leader", leader);
                consumer = await there.GetConsumerAsync(streamName, "bench", token);
            }
        }

        return consumer;
    }

    private async Task<long> FetchAsync(INatsJSConsumer consumer, long stored, RunContext run, CancellationTokenSource stop)
    {
        long got = 0;
        while (got < stored && !run.Broken && !stop.IsCancellationRequested)
        {
            INatsJSMsg<int>? lastOfBatch = null;
            // The last fetch asks only for what is left: a full batch would wait out its expiry for
            // messages that never come, and that wait would dominate the row.
            int want = (int)Math.Min(Batch, stored - got);
            await foreach (var msg in consumer.FetchAsync(new NatsJSFetchOpts { MaxMsgs = want, Expires = TimeSpan.FromSeconds(5) }, PayloadLength.Instance, stop.Token))
            {
                if (AckAll)
                {
                    lastOfBatch = msg;
                }
                else if (!AckNone)
                {
                    await msg.AckAsync(cancellationToken: stop.Token);
                }

                got += msg.Data == PayloadSize ? 1 : 0;
            }

            if (lastOfBatch is { } toAck)
            {
                await toAck.AckAsync(cancellationToken: stop.Token);
            }
        }

        return got;
    }

    private async Task<long> PushAsync(NatsJSContext js, string streamName, long stored, RunContext run, CancellationToken token)
    {
        // Flow control as push clients run it against a fast stream: the server holds deliveries
        // until the client answers, instead of filling the client's socket past max_pending.
        var consumer = await js.CreateOrUpdatePushConsumerAsync(streamName, new NatsJSPushConsumerOpts
        {
            DurableName = "benchpush",
            DeliverSubject = js.NewBaseInbox(),
            AckPolicy = ConsumerConfigAckPolicy.None,
            FlowControl = true,
            IdleHeartbeat = TimeSpan.FromSeconds(5),
        }, token);
        long got = 0;
        await foreach (var msg in consumer.ConsumeAsync(PayloadLength.Instance, cancellationToken: token))
        {
            got += msg.Data == PayloadSize ? 1 : 0;
            if (got >= stored || run.Broken)
            {
                break;
            }
        }

        return got;
    }
}
