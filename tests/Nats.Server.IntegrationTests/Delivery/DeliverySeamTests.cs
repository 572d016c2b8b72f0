using System.Text;
using Nats.Server.Delivery;
using Nats.Server.IntegrationTests.Core;
using Nats.Server.Subscriptions;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Delivery;

/// <summary>
/// The delivery seam as a subsystem uses it: a receiver subscribed in an account gets what a real
/// client publishes, and the server's internal publisher reaches real clients with headers.
/// </summary>
public class DeliverySeamTests
{
    private sealed record Seen(string Subject, string Reply, string Headers, string Payload, string Account, bool FromClient);

    private sealed class RecordingReceiver : MessageReceiver
    {
        public TaskCompletionSource<Seen> First { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override bool Deliver(Subscription subscription, in Message message)
        {
            First.TrySetResult(new Seen(Encoding.UTF8.GetString(message.Subject), Encoding.UTF8.GetString(message.Reply),
                Encoding.UTF8.GetString(message.Headers), Encoding.UTF8.GetString(message.Payload), message.Account.Name,
                message.Origin.Connection?.Name == "app"));
            return true;
        }
    }

    [Fact]
    public async Task AReceiver_IsHandedAClientsPublish_WithHeaders()
    {
        await using var server = await TestServer.StartAsync();
        var receiver = new RecordingReceiver();
        Assert.True(server.Server.GlobalAccount.SubList.Insert(new Subscription(receiver, "orders.>"u8.ToArray(), null, "1"u8.ToArray())));

        await using var client = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", Name = "app" });
        await client.PublishAsync("orders.new", "hello", headers: new NatsHeaders { ["X-Id"] = "7" }, replyTo: "reply.1");
        await client.PingAsync();

        var seen = await receiver.First.Task.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal("orders.new", seen.Subject);
        Assert.Equal("reply.1", seen.Reply);
        Assert.StartsWith("NATS/1.0\r\n", seen.Headers);
        Assert.Contains("X-Id: 7\r\n", seen.Headers);
        Assert.EndsWith("\r\n\r\n", seen.Headers);
        Assert.Equal("hello", seen.Payload);
        Assert.Equal("$G", seen.Account);
        Assert.True(seen.FromClient);
    }

    [Fact]
    public async Task TheInternalPublisher_ReachesARealClient_WithHeaders()
    {
        await using var server = await TestServer.StartAsync();
        await using var client = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}" });
        await using var subscription = await client.SubscribeCoreAsync<string>("events.>");
        await client.PingAsync();

        var publisher = server.Server.CreateInternalPublisher();
        Assert.True(publisher.Publish(server.Server.GlobalAccount, "events.one"u8, default, "NATS/1.0\r\nX-Kind: test\r\n\r\n"u8, "body"u8));

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var message = await subscription.Msgs.ReadAsync(timeout.Token);
        Assert.Equal("events.one", message.Subject);
        Assert.Equal("body", message.Data);
        Assert.Equal("test", message.Headers!["X-Kind"].ToString());
    }
}
