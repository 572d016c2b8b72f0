using System.Diagnostics;
using Nats.Server.IntegrationTests.Core;
using Nats.Server.IntegrationTests.Infrastructure;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// A subscriber that never reads, next to a healthy one: the stuck one is cut as a slow consumer,
/// the healthy one loses nothing, and the publisher goes back to full speed (issue 9 §1).
/// </summary>
public class StuckSubscriberTests(ITestOutputHelper output)
{
    private const int PayloadSize = 16 * 1024;
    private const int Count = 40_000;

    [Fact]
    public async Task Ours_StuckReaderIsCutQuickly_HealthyOneGetsEverything()
    {
        await using var server = await TestServer.StartAsync();
        var clock = Stopwatch.StartNew();
        TimeSpan? cutAt = null;
        using var stop = new CancellationTokenSource();
        var watcher = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested && server.Server.SlowConsumers == 0)
            {
                await Task.Delay(5);
            }
            if (server.Server.SlowConsumers > 0)
            {
                cutAt = clock.Elapsed;
            }
        });

        var (publisher, healthy) = await RunAsync(server.Port, clock);
        stop.Cancel();
        await watcher;

        Assert.Equal(1, server.Server.SlowConsumers);
        Assert.NotNull(cutAt);
        // Far below Go's 10 s write deadline even on a loaded machine; the test output shows the real figure.
        var stalledFrom = FirstStall(publisher.Progress);
        output.WriteLine($"ours: stuck reader cut at {cutAt.Value.TotalSeconds:F2} s; publisher first paused at {stalledFrom.TotalSeconds:F2} s");
        Report(publisher.Progress, cutAt.Value);
        Assert.True(cutAt.Value - stalledFrom < TimeSpan.FromSeconds(8), $"cut {cutAt - stalledFrom} after the publisher stalled");
        await healthy.DisposeAsync();
        await publisher.DisposeAsync();
    }

    [Fact]
    public async Task Go_StuckReaderIsCut_HealthyOneGetsEverything()
    {
        await using var server = await TestServers.StartGoAsync(new ServerSettings());
        var (publisher, healthy) = await RunAsync(server.Port, Stopwatch.StartNew());
        await healthy.DisposeAsync();
        await publisher.DisposeAsync();
    }

    [Fact]
    public async Task Ours_NoFastProducerStall_DropsForTheStuckReaderInsteadOfPausingThePublisher()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            o.MaxPending = 1024 * 1024;
            o.NoFastProducerStall = true;
        });
        await using var stuck = await RawClient.ConnectAsync(server.Port, receiveBufferSize: 4096);
        await stuck.ConnectAndReadInfoAsync();
        await stuck.SendAsync("SUB foo 1\r\n");
        await stuck.SyncAsync();
        await using var publisher = await FastPublisher.ConnectAsync(server.Port);

        await publisher.PublishAsync("foo", 0, 20_000, 1024);

        Assert.Equal(0, server.Server.Stalls);
        Assert.True(server.Server.FastProducerDrops > 0, "nothing was dropped for the stuck reader");
        // Its queue stays under three quarters of max_pending, so it is never cut for pending bytes.
        Assert.Equal(0, server.Server.SlowConsumers);
        output.WriteLine($"dropped {server.Server.FastProducerDrops} of 20000 for the stuck reader");
    }

    private async Task<(FastPublisher, CountingSubscriber)> RunAsync(int port, Stopwatch clock)
    {
        await using var stuck = await RawClient.ConnectAsync(port, receiveBufferSize: 4096);
        await stuck.ConnectAndReadInfoAsync();
        await stuck.SendAsync("SUB foo 1\r\n");
        await stuck.SyncAsync();
        var healthy = await CountingSubscriber.StartAsync(port, "foo", Count, 1);
        var publisher = await FastPublisher.ConnectAsync(port);

        clock.Restart();
        await publisher.PublishAsync("foo", 0, Count, PayloadSize);
        var done = await Task.WhenAny(healthy.Done, Task.Delay(TimeSpan.FromMinutes(3)));
        Assert.True(done == healthy.Done, $"healthy subscriber got {healthy.Received} of {Count}");
        Assert.Null(healthy.Failure);
        Assert.Equal(Count, healthy.Received);
        output.WriteLine($"published {Count} x {PayloadSize} B in {clock.Elapsed.TotalSeconds:F2} s");

        // The stuck reader's connection is closed by the server: reading it now ends (after what the kernel held).
        await stuck.ReadToEndAsync(TimeSpan.FromMinutes(1));
        return (publisher, healthy);
    }

    /// <summary>Start of the first 100 ms in which the publisher got nothing written.</summary>
    private static TimeSpan FirstStall(List<(TimeSpan At, long Sent)> progress)
    {
        for (var i = 1; i < progress.Count; i++)
        {
            if (progress[i].At - progress[i - 1].At > TimeSpan.FromMilliseconds(100))
            {
                return progress[i - 1].At;
            }
        }
        return TimeSpan.Zero;
    }

    private void Report(List<(TimeSpan At, long Sent)> progress, TimeSpan cutAt)
    {
        var stallStart = FirstStall(progress);
        double Rate(TimeSpan from, TimeSpan to)
        {
            var inWindow = progress.Where(p => p.At > from && p.At <= to).ToList();
            if (inWindow.Count < 2)
            {
                return 0;
            }
            return (inWindow[^1].Sent - inWindow[0].Sent) / (inWindow[^1].At - inWindow[0].At).TotalSeconds;
        }
        output.WriteLine($"publisher msg/s before the stall: {Rate(TimeSpan.Zero, stallStart):N0}, "
            + $"during (until the cut): {Rate(stallStart, cutAt):N0}, after the cut: {Rate(cutAt, TimeSpan.MaxValue):N0}");
    }
}
