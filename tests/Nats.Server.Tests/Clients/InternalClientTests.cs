using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Delivery;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Clients;

public class InternalClientTests
{
    private static bool Count(List<string> received, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload)
    {
        received.Add(System.Text.Encoding.UTF8.GetString(subject) + "=" + System.Text.Encoding.UTF8.GetString(payload));
        return true;
    }

    [Fact]
    public void Create_IsConnectedAndNeverStalls_CreateStallableMayStall()
    {
        var server = new NatsServer(new ServerOptions());
        var plain = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        Assert.True(plain.ConnectReceived);
        Assert.False(plain.Settings.CanStall);
        var stallable = InternalClient.CreateStallable(server, 2, server.GlobalAccount, NullLogger.Instance);
        Assert.True(stallable.ConnectReceived);
        Assert.True(stallable.Settings.CanStall);
    }

    [Fact]
    public void Subscribe_IsTrackedByTheClient_AndGoesWhenItCloses()
    {
        var server = new NatsServer(new ServerOptions());
        var client = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        var received = new List<string>();
        InternalClient.Subscribe(client, "a.*", "1", (Subscription _, MessageOrigin _, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> _,
            ReadOnlySpan<byte> _, ReadOnlySpan<byte> payload) => Count(received, subject, payload));
        Assert.Equal(1, client.SubscriptionCount);
        Assert.Equal(1, server.GlobalAccount.SubList.Count);

        var publisher = new InternalPublisher(client);
        Assert.True(publisher.Publish(server.GlobalAccount, "a.b"u8, default, default, "hi"u8));
        Assert.Equal(["a.b=hi"], received);
        Assert.Equal(1, client.InMsgs);
        Assert.Equal(2, client.InBytes);

        client.CloseConnection(ClosedReason.ServerShutdown);
        Assert.Equal(0, server.GlobalAccount.SubList.Count);
    }

    [Fact]
    public void SubscribeInAccount_GoesIntoThatAccountOnly_UntrackedBySid()
    {
        var server = new NatsServer(new ServerOptions());
        var client = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        var other = server.SystemAccount ?? throw new InvalidOperationException("no system account");
        var received = new List<string>();
        InternalClient.SubscribeInAccount(client, other, "x", "1", (Subscription _, MessageOrigin _, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> _,
            ReadOnlySpan<byte> _, ReadOnlySpan<byte> payload) => Count(received, subject, payload));
        Assert.Equal(0, client.SubscriptionCount);

        var publisher = new InternalPublisher(client);
        Assert.False(publisher.Publish(server.GlobalAccount, "x"u8, default, default, "1"u8));
        Assert.True(publisher.PublishDeferred(other, "x"u8, default, default, "2"u8));
        publisher.FlushBatch();
        Assert.Equal(["x=2"], received);
    }

    [Fact]
    public void AnInvalidSubject_Throws()
    {
        var server = new NatsServer(new ServerOptions());
        var client = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        Assert.Throws<ArgumentException>(() => InternalClient.Subscribe(client, "a..b", "1",
            (Subscription _, MessageOrigin _, ReadOnlySpan<byte> _, ReadOnlySpan<byte> _, ReadOnlySpan<byte> _, ReadOnlySpan<byte> _) => true));
    }
}
