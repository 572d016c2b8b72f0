using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class ClientDeliveryTests
{
    private static async Task<PipeClient> SubscribedAsync(string connect, ServerOptions? options = null)
    {
        var client = new PipeClient(options);
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT " + connect + "\r\nSUB a 1\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        return client;
    }

    [Fact]
    public async Task AMessage_IsQueuedWithItsSid_AndFlushedByThePublishersBatch()
    {
        await using var client = await SubscribedAsync("{\"verbose\":false}");
        var publisher = InternalClient.Create(client.Server, 2, client.Server.GlobalAccount, NullLogger.Instance);
        var subscription = Assert.Single(client.Connection.SnapshotSubscriptions());

        Assert.True(client.Connection.Delivery.TryDeliver(publisher.Origin, subscription, "MSG a "u8, " 2\r\n"u8, "hi\r\n"u8, 0, "a"u8, default));
        Assert.Equal(1, publisher.FlushBatch.Count);
        publisher.FlushBatch.FlushAll();
        Assert.Equal("MSG a 1 2\r\nhi\r\n", await client.ReadUntilAsync("hi\r\n"));
        Assert.Equal(1, client.Connection.OutMsgs);
    }

    [Fact]
    public async Task EchoOff_SkipsTheClientsOwnMessages()
    {
        await using var client = await SubscribedAsync("{\"verbose\":false,\"echo\":false}");
        var subscription = Assert.Single(client.Connection.SnapshotSubscriptions());
        var self = client.Connection;
        Assert.False(self.Delivery.TryDeliver(self.Origin, subscription, "MSG a "u8, " 2\r\n"u8, "hi\r\n"u8, 0, "a"u8, default));
        var other = InternalClient.Create(client.Server, 2, client.Server.GlobalAccount, NullLogger.Instance);
        Assert.True(self.Delivery.TryDeliver(other.Origin, subscription, "MSG a "u8, " 2\r\n"u8, "hi\r\n"u8, 0, "a"u8, default));
    }

    [Fact]
    public async Task AClientWithoutHeaders_GetsThePayloadOnly_AsAPlainMsg()
    {
        await using var client = await SubscribedAsync("{\"verbose\":false,\"headers\":false}");
        var publisher = InternalClient.Create(client.Server, 2, client.Server.GlobalAccount, NullLogger.Instance);
        var subscription = Assert.Single(client.Connection.SnapshotSubscriptions());
        var message = "NATS/1.0\r\nA: b\r\n\r\nhi\r\n"u8;
        Assert.True(client.Connection.Delivery.TryDeliver(publisher.Origin, subscription, "HMSG a "u8, " 18 20\r\n"u8, message, 18, "a"u8, default));
        publisher.FlushBatch.FlushAll();
        Assert.Equal("MSG a 1 2\r\nhi\r\n", await client.ReadUntilAsync("hi\r\n"));
    }

    [Fact]
    public async Task PastMaxPending_TheClientIsCutAsASlowConsumer()
    {
        await using var client = await SubscribedAsync("{\"verbose\":false}", new ServerOptions { MaxPending = 64 });
        var publisher = InternalClient.Create(client.Server, 2, client.Server.GlobalAccount, NullLogger.Instance);
        var subscription = Assert.Single(client.Connection.SnapshotSubscriptions());
        var payload = new byte[100];
        "\r\n"u8.CopyTo(payload.AsSpan(98));
        Assert.False(client.Connection.Delivery.TryDeliver(publisher.Origin, subscription, "MSG a "u8, " 98\r\n"u8, payload, 0, "a"u8, default));
        Assert.True(client.Connection.IsClosed);
        Assert.Equal(ClosedReason.SlowConsumerPendingBytes, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task AutoUnsubscribe_RemovesTheSubscriptionAtItsMax()
    {
        await using var client = new PipeClient();
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nUNSUB 1 1\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        var publisher = InternalClient.Create(client.Server, 2, client.Server.GlobalAccount, NullLogger.Instance);
        var subscription = Assert.Single(client.Connection.SnapshotSubscriptions());
        Assert.True(client.Connection.Delivery.TryDeliver(publisher.Origin, subscription, "MSG a "u8, " 2\r\n"u8, "hi\r\n"u8, 0, "a"u8, default));
        Assert.Equal(0, client.Connection.SubscriptionCount);
        Assert.False(client.Connection.Delivery.TryDeliver(publisher.Origin, subscription, "MSG a "u8, " 2\r\n"u8, "hi\r\n"u8, 0, "a"u8, default));
    }
}
