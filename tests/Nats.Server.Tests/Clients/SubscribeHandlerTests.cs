using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class SubscribeHandlerTests
{
    [Fact]
    public async Task Sub_IsIndexed_ASecondSubWithTheSameSid_IsNot()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nSUB b 1\r\nSUB c 2\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        Assert.Equal(2, client.Connection.SubscriptionCount);
        Assert.Equal(2, client.Server.GlobalAccount.SubList.Count);
    }

    [Fact]
    public async Task TheSubscriptionLimit_GetsGosError_WithoutClosing()
    {
        await using var client = new PipeClient(new ServerOptions { MaxSubscriptions = 1 });
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nSUB b 2\r\nPING\r\n");
        Assert.Equal("-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
        Assert.Equal(1, client.Connection.SubscriptionCount);
        Assert.False(client.Connection.IsClosed);
    }

    [Fact]
    public async Task UnsubWithMax_RemovesAfterThatManyDeliveries_PlainUnsubAtOnce()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nSUB b 2\r\nUNSUB 1 2\r\nUNSUB 2\r\nPUB a 1\r\nx\r\nPUB b 1\r\ny\r\nPUB a 1\r\nz\r\nPUB a 1\r\nw\r\nPING\r\n");
        Assert.Equal("MSG a 1 1\r\nx\r\nMSG a 1 1\r\nz\r\nPONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
        Assert.Equal(0, client.Connection.SubscriptionCount);
        Assert.Equal(0, client.Server.GlobalAccount.SubList.Count);
    }

    [Fact]
    public async Task Verbose_AcknowledgesSubAndUnsub()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":true}\r\nSUB a 1\r\nUNSUB 1\r\nPING\r\n");
        Assert.Equal("+OK\r\n+OK\r\n+OK\r\nPONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
    }
}
