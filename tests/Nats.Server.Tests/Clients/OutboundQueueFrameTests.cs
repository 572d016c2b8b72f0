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
