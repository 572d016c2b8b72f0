using System.Buffers;
using System.Text;
using Nats.Server.Clients;
using Nats.Server.Transport;

namespace Nats.Server.Tests.Clients;

/// <summary><see cref="OutboundQueue.AppendFrame"/>: how a route queues its RMSGs.</summary>
public class OutboundQueueFrameTests
{
    private sealed class Owner : IOutboundOwner
    {
        public int WriteErrors;

        public void OnWriteError() => WriteErrors++;

        public void NoteWriteActivity()
        {
        }

        public void OnWriteLoopFailed(Exception exception) => throw exception;
    }

    [Fact]
    public void AFrameHasNoPendingLimit_ItOnlyAsksAPublisherToWaitPastTheThreshold()
    {
        var (transport, _) = PipeTransport.CreatePair();
        var queue = new OutboundQueue(new Owner(), transport);
        var body = new byte[1000];
        "\r\n"u8.CopyTo(body.AsSpan(998));
        var stalls = 0;
        for (var i = 0; i < 200; i++)
        {
            Assert.True(queue.AppendFrame("RMSG $G a 998\r\n"u8, body, stallThreshold: 64 * 1024, canStall: true, out var stall));
            stalls += stall ? 1 : 0;
        }
        // 200 KB queued, far past the threshold: never refused, and every frame past it asked to wait.
        Assert.True(queue.PendingBytes >= 200 * 1000);
        Assert.InRange(stalls, 100, 199);
        Assert.Equal(200, queue.OutMsgs);
        Assert.Equal(200 * 998, queue.OutBytes);

        Assert.True(queue.AppendFrame("RMSG $G a 998\r\n"u8, body, stallThreshold: 64 * 1024, canStall: false, out var never));
        Assert.False(never);
    }

    [Fact]
    public async Task SuspendedStalls_ReleaseTheWaiter_AndNobodyWaitsAgainUntilTheReaderWrites()
    {
        var (transport, client) = PipeTransport.CreatePair();
        var queue = new OutboundQueue(new Owner(), transport);
        var body = new byte[1000];
        "\r\n"u8.CopyTo(body.AsSpan(998));
        var stalled = false;
        while (!stalled)
        {
            Assert.True(queue.AppendFrame("RMSG $G a 998\r\n"u8, body, stallThreshold: 8 * 1024, canStall: true, out stalled));
        }
        var waiter = queue.WaitUntilDrainedAsync(TimeSpan.FromMinutes(5)).AsTask();
        Assert.False(waiter.IsCompleted);

        queue.SuspendStalls();
        Assert.True(await waiter.WaitAsync(TimeSpan.FromSeconds(30)));
        // The reader wrote nothing since: past the threshold, nobody is asked to wait for it.
        Assert.True(queue.AppendFrame("RMSG $G a 998\r\n"u8, body, stallThreshold: 8 * 1024, canStall: true, out var stillSuspended));
        Assert.False(stillSuspended);

        // Once it writes, publishers wait for it again.
        var writer = Task.Run(queue.RunWriteLoopAsync);
        using var stop = new CancellationTokenSource();
        var reader = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                var read = await client.Input.ReadAsync(stop.Token);
                client.Input.AdvanceTo(read.Buffer.End);
            }
        });
        queue.SignalFlush();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (queue.BytesWritten == 0)
        {
            Assert.True(DateTime.UtcNow < deadline, "the queue wrote nothing");
            await Task.Delay(1);
        }
        var stalledAgain = false;
        for (var i = 0; i < 1000 && !stalledAgain; i++)
        {
            Assert.True(queue.AppendFrame("RMSG $G a 998\r\n"u8, body, stallThreshold: 8 * 1024, canStall: true, out stalledAgain));
        }
        Assert.True(stalledAgain);

        Assert.True(queue.TryClose());
        queue.SignalFlush();
        await writer.WaitAsync(TimeSpan.FromSeconds(30));
        await stop.CancelAsync();
        await reader.WaitAsync(TimeSpan.FromSeconds(30)).ContinueWith(_ => { }, TaskScheduler.Default);
    }

    [Fact]
    public async Task FramesAreWrittenInOrder_AndNothingIsQueuedOnceClosed()
    {
        var (transport, client) = PipeTransport.CreatePair();
        var queue = new OutboundQueue(new Owner(), transport);
        var writer = Task.Run(queue.RunWriteLoopAsync);
        Assert.True(queue.AppendFrame("RMSG $G a 2\r\n"u8, "hi\r\n"u8, 1024, canStall: false, out _));
        Assert.True(queue.Write("PING\r\n"u8));
        queue.SignalFlush();

        var expected = "RMSG $G a 2\r\nhi\r\nPING\r\n";
        var seen = new StringBuilder();
        while (seen.Length < expected.Length)
        {
            var read = await client.Input.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            seen.Append(Encoding.ASCII.GetString(read.Buffer.ToArray()));
            client.Input.AdvanceTo(read.Buffer.End);
        }
        Assert.Equal(expected, seen.ToString());

        Assert.True(queue.TryClose());
        Assert.False(queue.AppendFrame("RMSG $G a 2\r\n"u8, "hi\r\n"u8, 1024, canStall: false, out _));
        queue.SignalFlush();
        await writer.WaitAsync(TimeSpan.FromSeconds(30));
    }
}
