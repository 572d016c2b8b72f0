using Nats.LoadBench.Client;
using Nats.LoadBench.Kit;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Not a table row: a NATS.Net subscriber that never takes its messages off the client's channel,
/// so once that fills its socket is no longer read, and a raw publisher sends far more than the
/// server's max_pending (1 MB here, write_deadline 1 s) plus every buffer in between. The server must cut the
/// subscriber, and the harness must report the run as FAILED; --self-check runs it to prove both.
/// </summary>
internal sealed class StuckSubscriberScenario : Scenario
{
    public StuckSubscriberScenario()
    {
        // A short write deadline too: Go stalls the publisher rather than overflow max_pending, and cuts
        // the stuck reader when a write has made no progress for this long.
        ServerConfig = "max_pending: 1MB\nwrite_deadline: \"1s\"\n";
    }

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        string subject = run.Subject("stuck");
        var conn = await run.ConnectAsync("stuck-sub");
        // Subscribed and never read: the reference keeps the subscription alive for the run.
        var sub = await conn.SubscribeCoreAsync(subject, null, PayloadLength.Instance);
        await conn.PingAsync();
        var pub = run.ConnectRaw("pub0");
        long published;
        try
        {
            (published, _, _) = await RawPublisher.RunAsync([pub], Frames.Pub(subject, null, PayloadSize), run.Settings);
        }
        catch (RowFailedException)
        {
            // A stalled publisher may also be let go or cut; the cut of the subscriber is what is checked.
            published = run.Settings.Count;
        }

        // Nothing will arrive; the wait ends at the cut, or after a few seconds without one.
        await Drain.UntilAsync(() => 0, published, run, stallTimeoutMs: 5_000);
        GC.KeepAlive(sub);
        return new Measurement(0, 1, published);
    }
}
