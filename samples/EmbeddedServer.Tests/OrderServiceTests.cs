using NATS.Client.Core;

namespace EmbeddedServer.Tests;

/// <summary>What an application's tests look like with the server in-process: NATS.Net, unchanged.</summary>
public sealed class OrderServiceTests(NatsServerFixture nats) : IClassFixture<NatsServerFixture>
{
    [Fact]
    public async Task PublishSubscribe_DeliversTheMessage()
    {
        await using var connection = nats.Connect();
        await using var subscription = await connection.SubscribeCoreAsync<string>("orders.created");
        await connection.PingAsync();

        await connection.PublishAsync("orders.created", "order-42");

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var message = await subscription.Msgs.ReadAsync(timeout.Token);
        Assert.Equal("order-42", message.Data);
    }

    [Fact]
    public async Task RequestReply_ReachesTheService()
    {
        await using var service = nats.Connect();
        await using var requests = await service.SubscribeCoreAsync<int>("orders.price");
        await service.PingAsync();
        var responder = Task.Run(async () =>
        {
            await foreach (var request in requests.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync(request.Data * 3);
                return;
            }
        });

        await using var client = nats.Connect();
        var reply = await client.RequestAsync<int, int>("orders.price", 14);
        Assert.Equal(42, reply.Data);
        await responder;
    }

    [Fact]
    public async Task NoResponders_IsReportedToTheRequester()
    {
        await using var client = nats.Connect();
        await Assert.ThrowsAsync<NatsNoRespondersException>(async () => await client.RequestAsync<int, int>("nobody.home", 1));
    }
}
