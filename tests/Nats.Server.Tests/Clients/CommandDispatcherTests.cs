using Nats.Server.Clients;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class CommandDispatcherTests
{
    [Fact]
    public async Task Ping_GetsPong_VerboseConnect_GetsOk()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":true}\r\nPING\r\n");
        Assert.Equal("+OK\r\nPONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
        Assert.True(client.Connection.ConnectReceived);
    }

    [Fact]
    public async Task AnUnknownOperation_GetsGosError_AndCloses()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("FOO bar\r\n");
        Assert.Equal("-ERR 'Unknown Protocol Operation'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.ProtocolViolation, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task APayloadOverMaxPayload_GetsGosError_AndCloses()
    {
        await using var client = new PipeClient(new ServerOptions { MaxPayload = 10 });
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPUB a 11\r\n");
        Assert.Equal("-ERR 'Maximum Payload Violation'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.MaxPayloadExceeded, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task AClientInfoThatIsNotJson_Closes()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("INFO {\"a\":1}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        await client.SendAsync("INFO [1]\r\n");
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.ProtocolViolation, client.Connection.ClosedReason);
    }

    [Theory]
    [InlineData("{}", true)]
    [InlineData("{\"a\":[1,2]}", true)]
    [InlineData("[1]", false)]
    [InlineData("{\"a\":1} x", false)]
    [InlineData("{", false)]
    public void IsJsonObject(string json, bool expected) =>
        Assert.Equal(expected, CommandDispatcher.IsJsonObject(System.Text.Encoding.UTF8.GetBytes(json)));
}
