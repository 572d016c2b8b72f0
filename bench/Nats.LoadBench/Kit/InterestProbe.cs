using NATS.Client.Core;

namespace Nats.LoadBench.Kit;

/// <summary>
/// Waits until the publisher's server forwards a subject across a gateway or leaf connection, by sending empty
/// messages on that very subject from a client of that server until every subscriber has seen one.
/// </summary>
/// <remarks>
/// Neither server lists a gateway's interest by subject (<c>/gatewayz</c> gives counts only), and a gateway in
/// interest-only mode drops what it has no interest for, so only a delivery proves the subject can cross. The
/// probes are outside the measured time and are not counted as deliveries (<see cref="CountingSubscriber.Probes"/>).
/// </remarks>
internal static class InterestProbe
{
    private const int TimeoutMs = 20_000;

    public static async Task UntilDeliveredAsync(RunContext run, string subject, IReadOnlyList<CountingSubscriber> subs, int publisherServer = 0)
    {
        var conn = await run.ConnectAsync("probe", server: publisherServer);
        var deadline = Environment.TickCount64 + TimeoutMs;
        while (subs.Any(s => s.Probes == 0))
        {
            if (Environment.TickCount64 > deadline)
            {
                throw new RowFailedException($"interest in {subject} did not cross to every subscriber's server within {TimeoutMs / 1000} s");
            }

            run.ThrowIfBroken();
            await conn.PublishAsync(subject);
            await conn.PingAsync();
            // The servers announce no "interest arrived" event; this poll is outside the measured time.
            await Task.Delay(20);
        }
    }

    /// <summary>Request/reply rows: a request that gets its answer proves both the service's and the reply's interest crossed.</summary>
    public static async Task UntilAnsweredAsync(RunContext run, NatsConnection requester, string subject)
    {
        var deadline = Environment.TickCount64 + TimeoutMs;
        var opts = new NatsSubOpts { Timeout = TimeSpan.FromMilliseconds(500) };
        while (true)
        {
            run.ThrowIfBroken();
            try
            {
                await requester.RequestAsync<byte[], int>(subject, [], replySerializer: PayloadLength.Instance, replyOpts: opts);
                return;
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException)
            {
                // No responders yet (the service's interest has not crossed) or no answer within the timeout.
                if (Environment.TickCount64 > deadline)
                {
                    throw new RowFailedException($"no answer across the link on {subject} within {TimeoutMs / 1000} s: {ex.Message}", ex);
                }
            }

            await Task.Delay(20);
        }
    }
}
