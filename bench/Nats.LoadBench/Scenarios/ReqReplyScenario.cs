using System.Diagnostics;
using Nats.LoadBench.Kit;
using Nats.LoadBench.Servers;
using NATS.Client.Core;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// C NATS.Net clients each make one request at a time (RequestAsync, NATS.Net's shared reply
/// inbox) and wait for the reply; S NATS.Net services answer with a payload of the same size,
/// optionally as a queue group. Every round trip lands in a preallocated array for P50/P99.
/// </summary>
internal sealed class ReqReplyScenario : Scenario
{
    public int Clients { get; init; } = 1;

    public int Services { get; init; } = 1;

    public bool QueueGroup { get; init; }

    /// <summary>Cluster rows: the services' server (the requesters are on server 0).</summary>
    public int ServiceServer { get; init; }

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        string subject = run.Subject("req");
        var s = run.Settings;
        var reply = Frames.Payload(PayloadSize);
        var services = new List<Task>();
        for (int i = 0; i < Services; i++)
        {
            var conn = await run.ConnectAsync($"svc{i}", server: ServiceServer);
            var sub = await conn.SubscribeCoreAsync(subject, QueueGroup ? "q" : null, PayloadLength.Instance);
            await conn.PingAsync();
            services.Add(Task.Run(() => ServeAsync(conn, sub, reply)));
        }

        if (Link == ClusterLink.Routes)
        {
            await run.WaitForRouteInterestAsync(0, subject, ServiceServer == 0 ? 0 : 1);
        }

        var clients = new NatsConnection[Clients];
        for (int i = 0; i < Clients; i++)
        {
            clients[i] = await run.ConnectAsync($"req{i}");
            if (Link != ClusterLink.Routes)
            {
                await InterestProbe.UntilAnsweredAsync(run, clients[i], subject);
            }
        }

        long perClientCap = s.CountMode ? s.Count / Clients : (long)(s.Duration.TotalSeconds * 100_000 / Clients) + 1024;
        var request = Frames.Payload(PayloadSize);
        long start = Stopwatch.GetTimestamp();
        long deadline = s.DeadlineFrom(start);
        var lat = new long[Clients][];
        var tasks = new Task<(int Done, int Good)>[Clients];
        for (int i = 0; i < Clients; i++)
        {
            lat[i] = new long[perClientCap];
            var (conn, samples) = (clients[i], lat[i]);
            tasks[i] = Task.Run(() => RequestLoopAsync(conn, subject, request, samples, deadline, run));
        }

        var results = await Task.WhenAll(tasks);
        long end = Stopwatch.GetTimestamp();
        int total = results.Sum(r => r.Done);
        var all = new long[total];
        int k = 0;
        for (int i = 0; i < Clients; i++)
        {
            Array.Copy(lat[i], 0, all, k, results[i].Done);
            k += results[i].Done;
        }

        Array.Sort(all);
        double toUs = 1_000_000.0 / Stopwatch.Frequency;
        double p50 = all.Length == 0 ? 0 : all[(int)(all.Length * 0.50)] * toUs;
        double p99 = all.Length == 0 ? 0 : all[Math.Min(all.Length - 1, (int)(all.Length * 0.99))] * toUs;
        long expected = s.CountMode ? perClientCap * Clients : total;
        return new Measurement(results.Sum(r => r.Good), (end - start) / (double)Stopwatch.Frequency, expected, p50, p99);
    }

    private async Task<(int Done, int Good)> RequestLoopAsync(NatsConnection conn, string subject, byte[] request, long[] lat, long deadline, RunContext run)
    {
        int n = 0;
        int good = 0;
        while (n < lat.Length && Stopwatch.GetTimestamp() < deadline && !run.Broken)
        {
            long t0 = Stopwatch.GetTimestamp();
            NatsMsg<int> answer;
            try
            {
                answer = await conn.RequestAsync(subject, request, replySerializer: PayloadLength.Instance);
            }
            catch (Exception ex) when (ex is NatsException or OperationCanceledException)
            {
                throw new RowFailedException($"request {n + 1} failed: {ex.Message}", ex);
            }

            lat[n++] = Stopwatch.GetTimestamp() - t0;
            if (answer.Data == PayloadSize)
            {
                good++;
            }
        }

        return (n, good);
    }

    private static async Task ServeAsync(NatsConnection conn, INatsSub<int> sub, byte[] reply)
    {
        try
        {
            while (await sub.Msgs.WaitToReadAsync())
            {
                while (sub.Msgs.TryRead(out var msg))
                {
                    if (msg.ReplyTo is { } to)
                    {
                        await conn.PublishAsync(to, reply);
                    }
                }
            }
        }
        catch (Exception ex) when (ex is System.Threading.Channels.ChannelClosedException or NatsException or OperationCanceledException)
        {
            // The service's connection ended; RunContext reports a cut, the requesters a missing reply.
        }
    }
}
