using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class ReadLoopTests
{
    [Fact]
    public void Buffer_GrowsForABigMessage_AndForFullReads_ThenShrinksBack()
    {
        const int initial = ReadLoop.InitialBufferSize;
        const int max = ReadLoop.MaxBufferSize;
        Assert.Equal(0, ReadLoop.NextBufferSize(initial, needed: 0, readFilledBuffer: false, filled: 0));
        Assert.Equal(100_000, ReadLoop.NextBufferSize(initial, needed: 100_000, readFilledBuffer: false, filled: 10));
        Assert.Equal(initial * 2, ReadLoop.NextBufferSize(initial, needed: 0, readFilledBuffer: true, filled: 0));
        Assert.Equal(0, ReadLoop.NextBufferSize(max, needed: 0, readFilledBuffer: true, filled: 0));
        Assert.Equal(max, ReadLoop.NextBufferSize(4 * max, needed: 0, readFilledBuffer: false, filled: max / 2));
        Assert.Equal(0, ReadLoop.NextBufferSize(4 * max, needed: 0, readFilledBuffer: false, filled: max));
    }

    [Fact]
    public async Task AMessageBiggerThanTheBuffer_ArrivesWhole_AcrossWrites()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        var payload = new string('x', 3 * ReadLoop.InitialBufferSize);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB big 1\r\nPUB big " + payload.Length + "\r\n" + payload[..1000]);
        await client.SendAsync(payload[1000..] + "\r\nPING\r\n");
        var text = await client.ReadUntilAsync("PONG\r\n");
        Assert.Equal("MSG big 1 " + payload.Length + "\r\n" + payload + "\r\nPONG\r\n", text);
        Assert.Equal(1, client.Connection.InMsgs);
    }

    [Fact]
    public async Task CommandsSplitAnywhere_AreParsedOnceComplete()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        foreach (var piece in new[] { "CONN", "ECT {\"verbose\":false}\r\nSU", "B a 1\r\nPUB a 2\r", "\nhi", "\r\nPI", "NG\r\n" })
        {
            await client.SendAsync(piece);
        }
        Assert.Equal("MSG a 1 2\r\nhi\r\nPONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
    }

    [Fact]
    public async Task TheClientHangingUp_EndsTheConnection_AsClientClosed()
    {
        var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        await client.DisposeAsync();
        Assert.True(client.Connection.IsClosed);
    }
}
