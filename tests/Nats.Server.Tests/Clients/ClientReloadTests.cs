using Nats.Server.Clients;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class ClientReloadTests
{
    [Fact]
    public async Task BeforeConnect_TheReloadedMaxPayloadApplies_AfterConnect_ThroughTheAccountLimits()
    {
        await using var client = new PipeClient(new ServerOptions { MaxPayload = 1000 });
        await client.ReadUntilAsync("INFO {}\r\n");
        var reloaded = new ServerOptions { MaxPayload = 200 };
        client.Connection.Reload.ApplyReloadedOptions(reloaded, refreshTrace: false);
        Assert.Same(reloaded, client.Connection.Settings.Options);
        Assert.Equal(200, client.Connection.Settings.MaxPayload);

        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        client.Connection.Reload.ApplyReloadedOptions(new ServerOptions { MaxPayload = 100 }, refreshTrace: false);
        Assert.Equal(100, client.Connection.Settings.MaxPayload);
        await client.SendAsync("PUB a 101\r\n");
        Assert.Equal("-ERR 'Maximum Payload Violation'\r\n", await client.ReadUntilAsync("\r\n"));
    }

    [Fact]
    public async Task AsyncInfo_GoesOnlyToProtocol1ClientsPastTheirFirstPong()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        var info = "INFO {\"ldm\":true}\r\n"u8.ToArray();
        await client.SendAsync("CONNECT {\"verbose\":false,\"protocol\":1}\r\n");
        Assert.False(client.Connection.Reload.TrySendAsyncInfo(info));
        await client.SendAsync("PING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        Assert.True(client.Connection.Reload.TrySendAsyncInfo(info));
        Assert.Equal("INFO {\"ldm\":true}\r\n", await client.ReadUntilAsync("\r\n"));
    }

    [Fact]
    public async Task AsyncInfo_NotForProtocol0()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        Assert.False(client.Connection.Reload.TrySendAsyncInfo("INFO {}\r\n"u8.ToArray()));
    }

    [Fact]
    public async Task CloseForMaxConnections_SendsGosError_AndCloses()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        client.Connection.Reload.CloseForMaxConnections();
        Assert.Equal("-ERR 'maximum connections exceeded'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.MaxConnectionsExceeded, client.Connection.ClosedReason);
    }
}
