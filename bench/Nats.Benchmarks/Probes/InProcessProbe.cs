using System.Diagnostics;
using Nats.Server.Embedding;
using Nats.Server.NatsNet;
using NATS.Client.Core;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// NATS.Net against one embedded server, over loopback TCP and over the socket-less in-process
/// connection, alternating transports for three rounds: 1:1 pub/sub (16-byte payloads, msgs/s at the
/// subscriber) and sequential request/reply (round trips per second, median/p99 latency).
/// </summary>
internal static class InProcessProbe
{
    public static async Task<int> RunAsync(int messages, int requests)
    {
        await using var server = await NatsServerHost.StartAsync();
        var transports = new (string Name, Func<NatsOpts> Opts)[]
        {
            ("tcp", () => NatsOpts.Default with { Url = server.ClientUrl }),
            ("in-process", () => server.InProcessOpts()),
        };
        // Warm-up pass (JIT, pools), then measured rounds alternating the transports.
        foreach (var (_, opts) in transports)
        {
            await PubSubAsync(opts, messages / 10);
            await RequestReplyAsync(opts, requests / 10);
        }
        var results = transports.ToDictionary(t => t.Name, _ => (PubSub: new List<double>(), Rps: new List<double>(), P50: new List<double>(), P99: new List<double>()));
        for (var round = 0; round < 3; round++)
        {
            foreach (var (name, opts) in transports)
            {
                results[name].PubSub.Add(await PubSubAsync(opts, messages));
                var (rps, p50, p99) = await RequestReplyAsync(opts, requests);
                results[name].Rps.Add(rps);
                results[name].P50.Add(p50);
                results[name].P99.Add(p99);
            }
        }
        Console.WriteLine($"NATS.Net {typeof(NatsConnection).Assembly.GetName().Version}, one embedded server, median of 3 rounds");
        Console.WriteLine($"{"transport",-12} {"pub/sub 1:1 msgs/s",20} {"req/rep per s",14} {"p50 us",8} {"p99 us",8}");
        foreach (var (name, r) in results)
        {
            Console.WriteLine($"{name,-12} {Median(r.PubSub),20:N0} {Median(r.Rps),14:N0} {Median(r.P50),8:F1} {Median(r.P99),8:F1}");
        }
        return 0;
    }

    private static async Task<double> PubSubAsync(Func<NatsOpts> opts, int count)
    {
        await using var publisher = new NatsConnection(opts());
        await using var subscriber = new NatsConnection(opts() with { SubPendingChannelCapacity = 1 << 20 });
        var payload = new byte[16];
        await using var subscription = await subscriber.SubscribeCoreAsync<byte[]>("probe.pubsub");
        await subscriber.PingAsync();
        await publisher.ConnectAsync();
        var clock = Stopwatch.StartNew();
        var receiving = Task.Run(async () =>
        {
            var received = 0;
            await foreach (var _ in subscription.Msgs.ReadAllAsync())
            {
                if (++received == count)
                {
                    return;
                }
            }
        });
        for (var i = 0; i < count; i++)
        {
            await publisher.PublishAsync("probe.pubsub", payload);
        }
        await receiving.WaitAsync(TimeSpan.FromMinutes(2));
        return count / clock.Elapsed.TotalSeconds;
    }

    private static async Task<(double PerSecond, double P50, double P99)> RequestReplyAsync(Func<NatsOpts> opts, int count)
    {
        await using var service = new NatsConnection(opts());
        await using var client = new NatsConnection(opts());
        await using var requests = await service.SubscribeCoreAsync<byte[]>("probe.rpc");
        await service.PingAsync();
        using var stop = new CancellationTokenSource();
        var serving = Task.Run(async () =>
        {
            try
            {
                await foreach (var request in requests.Msgs.ReadAllAsync(stop.Token))
                {
                    await request.ReplyAsync(request.Data);
                }
            }
            catch (OperationCanceledException)
            {
            }
        });
        await client.ConnectAsync();
        var payload = new byte[16];
        var latencies = new double[count];
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < count; i++)
        {
            var start = Stopwatch.GetTimestamp();
            await client.RequestAsync<byte[], byte[]>("probe.rpc", payload);
            latencies[i] = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
        }
        var perSecond = count / clock.Elapsed.TotalSeconds;
        stop.Cancel();
        await serving;
        Array.Sort(latencies);
        return (perSecond, latencies[count / 2], latencies[(int)(count * 0.99)]);
    }

    private static double Median(List<double> values) => values.Order().ElementAt(values.Count / 2);
}
