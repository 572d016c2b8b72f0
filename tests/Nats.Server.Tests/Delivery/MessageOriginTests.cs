using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Delivery;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Delivery;

public class MessageOriginTests
{
    [Fact]
    public void TheServersOwnPublisher_HasNoConnection_NeverWaits_AndCountsItsOwnTraffic()
    {
        var server = new NatsServer(new ServerOptions());
        var publisher = server.CreateInternalPublisher();
        var holder = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        MessageOrigin? seen = null;
        InternalClient.Subscribe(holder, "a", "1", (Subscription _, MessageOrigin origin, ReadOnlySpan<byte> _, ReadOnlySpan<byte> _,
            ReadOnlySpan<byte> _, ReadOnlySpan<byte> _) =>
        {
            seen = origin;
            return true;
        });

        Assert.True(publisher.Publish(server.GlobalAccount, "a"u8, default, default, "hello"u8));
        Assert.Same(publisher.Origin, seen);
        Assert.Null(publisher.Origin.Connection);
        Assert.False(publisher.Origin.CanStall);
        Assert.Equal(1, publisher.Origin.InMsgs);
        Assert.Equal(5, publisher.Origin.InBytes);
        Assert.Equal(0, holder.InMsgs);
    }

    [Fact]
    public void AClientsOrigin_IsTheClient_AndMayWaitUnlessInternal()
    {
        var server = new NatsServer(new ServerOptions());
        var stallable = InternalClient.CreateStallable(server, 1, server.GlobalAccount, NullLogger.Instance);
        var plain = InternalClient.Create(server, 2, server.GlobalAccount, NullLogger.Instance);
        Assert.Same(stallable, stallable.Origin.Connection);
        Assert.Equal(1UL, stallable.Origin.Id);
        Assert.True(stallable.Origin.CanStall);
        Assert.False(plain.Origin.CanStall);
    }

    [Fact]
    public void TheServersRequestInfo_NamesTheAccountAndTheServer()
    {
        var server = new NatsServer(new ServerOptions { ServerName = "n1" });
        var origin = new MessageOrigin(server, 7);
        using var json = JsonDocument.Parse(Encoding.UTF8.GetString(origin.RequestInfoJson("A", share: true, serverInfo: false)));
        Assert.Equal("A", json.RootElement.GetProperty("acc").GetString());
        Assert.Equal(7, json.RootElement.GetProperty("id").GetInt64());
        Assert.Equal("n1", json.RootElement.GetProperty("server").GetString());
    }
}
