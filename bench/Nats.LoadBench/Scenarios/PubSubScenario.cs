using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Kit;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// P raw fast publishers and S NATS.Net subscribers on one subject. S = 0 is the pub-only row:
/// msg/s counts published messages until a PING round trip proves the server consumed them (in
/// smoke mode one verifying subscriber must also receive every one). Otherwise msg/s counts
/// deliveries to all subscribers, from the first publish to the last delivery.
/// </summary>
internal sealed class PubSubScenario : Scenario
{
    public int Publishers { get; init; } = 1;

    public int Subscribers { get; init; }

    public Transport Transport { get; init; } = Transport.Plain;

    /// <summary>Cluster, gateway and leaf rows: the server of each subscriber (the publishers are on server 0).</summary>
    public int[]? SubscriberServers { get; init; }

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        string subject = run.Subject("ps");
        int verifiers = Subscribers == 0 && run.Settings.CountMode && !IsLimit ? 1 : 0;
        var subs = new List<CountingSubscriber>();
        for (int i = 0; i < Subscribers + verifiers; i++)
        {
            int server = SubscriberServers?[i % SubscriberServers.Length] ?? 0;
            subs.Add(await CountingSubscriber.StartAsync(await run.ConnectAsync($"sub{i}", Transport, server), subject, PayloadSize));
        }

        if (Link == ClusterLink.Routes)
        {
            await run.WaitForRouteInterestAsync(0, subject, SubscriberServers?.Where(s => s != 0).Distinct().Count() ?? 0);
        }
        else
        {
            await InterestProbe.UntilDeliveredAsync(run, subject, subs);
        }

        var pubs = Enumerable.Range(0, Publishers).Select(i => run.ConnectRaw($"pub{i}", Transport)).ToList();
        var (published, start, flushed) = await RawPublisher.RunAsync(pubs, Frames.Pub(subject, null, PayloadSize), run.Settings);
        if (Subscribers == 0)
        {
            long seen = verifiers == 0 ? published : await Drain.UntilAsync(() => CountingSubscriber.Total(subs), published, run);
            return new Measurement(seen, Seconds(start, flushed), published);
        }

        long expected = published * Subscribers;
        long got = await Drain.UntilAsync(() => CountingSubscriber.Total(subs), expected, run);
        if (subs.Sum(s => s.WrongSize) is > 0 and var wrong)
        {
            throw new RowFailedException($"{wrong} deliveries had the wrong payload size");
        }

        return new Measurement(got, Seconds(start, subs.Max(s => s.LastTicks)), expected);
    }

    private static double Seconds(long start, long end) => (Math.Max(end, start + 1) - start) / (double)Stopwatch.Frequency;
}
