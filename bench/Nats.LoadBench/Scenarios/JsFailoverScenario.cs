using System.Diagnostics;
using Nats.LoadBench.Kit;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Failover of an R3 file stream: a publisher on a follower publishes synchronously (each message its own
/// Nats-Msg-Id, retried until acknowledged), the stream's leader is killed (kill -9), and the time from the kill to
/// the first acknowledged publish is the figure. Publishing then goes on; the stream must hold exactly the acknowledged
/// messages (a retried one counts once: the duplicate window answers for it).
/// </summary>
internal sealed class JsFailoverScenario : Scenario
{
    public override bool WarmsUp => false;

    /// <summary>Publishes acknowledged after the new leader took over before the run ends.</summary>
    private const int After = 200;

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        if (run.KillServer is not { } kill)
        {
            throw new RowFailedException("the failover row needs its servers' processes");
        }

        // Server 0 may be the leader this row kills.
        var admin = await JetStreamKit.ContextAsync(run, "js-failover-admin", watched: false);
        string subject = run.Subject("jsf");
        string name = $"BENCHF{run.Settings.RunId}";
        int leader = await JetStreamKit.CreateReplicatedStreamAsync(admin, new StreamConfig(name, [subject]) { Storage = StreamConfigStorage.File, NumReplicas = 3 }, run);
        int follower = (leader + 1) % 3;
        // Short request timeouts: a publish that reached the dying leader is never answered and is retried.
        var conn = await run.ConnectAsync("js-failover-pub", server: follower);
        var js = new NatsJSContext(conn);
        var payload = Frames.Payload(PayloadSize);
        long acked = 0;
        long before = run.Settings.CountMode ? Math.Min(run.Settings.Count, 1_000) : long.MaxValue;
        long warmUntil = run.Settings.DeadlineFrom(Stopwatch.GetTimestamp());
        while (acked < before && Stopwatch.GetTimestamp() < warmUntil)
        {
            await PublishUntilAckedAsync(js, subject, payload, $"m{acked}", run);
            acked++;
        }

        long killedAt = Stopwatch.GetTimestamp();
        kill(leader);
        await PublishUntilAckedAsync(js, subject, payload, $"m{acked}", run);
        double failoverMs = Stopwatch.GetElapsedTime(killedAt).TotalMilliseconds;
        acked++;
        for (int i = 0; i < After; i++)
        {
            await PublishUntilAckedAsync(js, subject, payload, $"m{acked}", run);
            acked++;
        }

        var info = await js.GetStreamAsync(name);
        if (info.Info.State.Messages != acked)
        {
            throw new RowFailedException($"after the failover the stream holds {info.Info.State.Messages:N0} messages, {acked:N0} were acknowledged");
        }

        return new Measurement(acked, failoverMs / 1000, acked, FailoverMs: failoverMs);
    }

    private static async Task PublishUntilAckedAsync(NatsJSContext js, string subject, byte[] payload, string id, RunContext run)
    {
        var deadline = Stopwatch.GetTimestamp() + (60 * Stopwatch.Frequency);
        while (true)
        {
            run.ThrowIfBroken();
            try
            {
                using var attempt = new CancellationTokenSource(TimeSpan.FromMilliseconds(500));
                var ack = await js.PublishAsync(subject, payload, opts: new NatsJSPubOpts { MsgId = id, RetryAttempts = 1 }, cancellationToken: attempt.Token);
                // A "duplicate" answer: an earlier attempt was stored and only its answer was lost.
                if (ack.IsSuccess() || ack is { Error: null, Duplicate: true })
                {
                    return;
                }
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException)
            {
                if (Stopwatch.GetTimestamp() > deadline)
                {
                    throw new RowFailedException($"no acknowledgement within 60 s ({ex.Message})");
                }

                if (ex is NatsNoRespondersException or NatsJSPublishNoResponseException)
                {
                    // Nobody leads: the interest comes back with the new leader. A short pause keeps this from spinning.
                    await Task.Delay(10);
                }
            }
        }
    }
}
