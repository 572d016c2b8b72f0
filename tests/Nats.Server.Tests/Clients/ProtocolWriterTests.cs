using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class ProtocolWriterTests
{
    [Fact]
    public async Task Enqueue_WaitsForTheBatch_SendNow_GoesAtOnce()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        var connection = client.Connection;
        var writer = new ProtocolWriter(connection, connection.Outbound, connection.FlushBatch);

        writer.Enqueue("+OK\r\n"u8);
        Assert.Equal(1, connection.FlushBatch.Count);
        connection.FlushBatch.FlushAll();
        Assert.Equal("+OK\r\n", await client.ReadUntilAsync("+OK\r\n"));

        writer.SendNow("PING\r\n"u8);
        Assert.Equal(0, connection.FlushBatch.Count);
        Assert.Equal("PING\r\n", await client.ReadUntilAsync("PING\r\n"));
    }
}
