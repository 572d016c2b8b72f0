using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Clients;

public class ClientReloadTests
{
    private static (ClientReload Reload, ConnectionSettings Settings, ConnectOptions Connect, ClientConnection Client) Setup()
    {
        var server = new NatsServer(new ServerOptions { MaxPayload = 1000 });
        var client = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        var settings = new ConnectionSettings(server.Options, awaitingAuth: false, trace: false);
        var connect = new ConnectOptions();
        var protocol = new ProtocolWriter(client, client.Outbound, client.FlushBatch);
        var reload = new ClientReload(client, server, settings, new ConnectionAuth(NullLogger.Instance, client), connect, protocol, NullLogger.Instance);
        return (reload, settings, connect, client);
    }

    [Fact]
    public void BeforeConnect_TheReloadedMaxPayloadApplies()
    {
        var (reload, settings, _, _) = Setup();
        var options = new ServerOptions { MaxPayload = 200 };
        reload.ApplyReloadedOptions(options, refreshTrace: false);
        Assert.Same(options, settings.Options);
        Assert.Equal(200, settings.MaxPayload);
    }

    [Fact]
    public void AsyncInfo_GoesOnlyToProtocol1ClientsPastTheirFirstPong()
    {
        var (reload, settings, connect, client) = Setup();
        var info = "INFO {}\r\n"u8.ToArray();
        Assert.False(reload.TrySendAsyncInfo(info));

        settings.FirstPongSent = true;
        Assert.False(reload.TrySendAsyncInfo(info));

        connect.Protocol = 1;
        Assert.True(reload.TrySendAsyncInfo(info));

        client.CloseConnection(ClosedReason.ServerShutdown);
        Assert.False(reload.TrySendAsyncInfo(info));
    }

    [Fact]
    public void CloseForMaxConnections_ClosesWithThatReason()
    {
        var (reload, _, _, client) = Setup();
        reload.CloseForMaxConnections();
        Assert.True(client.IsClosed);
        Assert.Equal(ClosedReason.MaxConnectionsExceeded, client.ClosedReason);
    }
}
