using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Clients;

public class FlushBatchTests
{
    private static (NatsServer Server, ClientConnection A, ClientConnection B) Setup()
    {
        var server = new NatsServer(new ServerOptions());
        var a = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        var b = InternalClient.Create(server, 2, server.GlobalAccount, NullLogger.Instance);
        return (server, a, b);
    }

    [Fact]
    public void EachDestination_IsTakenOncePerBatch()
    {
        var (server, a, b) = Setup();
        var batch = new FlushBatch(server);
        batch.Add(a);
        batch.Add(b);
        batch.Add(a);
        batch.Add(b);
        Assert.Equal(2, batch.Count);
    }

    [Fact]
    public void FlushAll_StartsANewBatch()
    {
        var (server, a, b) = Setup();
        var batch = new FlushBatch(server);
        batch.Add(a);
        batch.Add(b);
        batch.FlushAll();
        Assert.Equal(0, batch.Count);
        batch.Add(a);
        batch.Add(a);
        Assert.Equal(1, batch.Count);
    }

    [Fact]
    public void TwoPublishers_BothFlushASharedDestination()
    {
        var (server, a, _) = Setup();
        var first = new FlushBatch(server);
        var second = new FlushBatch(server);
        first.Add(a);
        second.Add(a);
        Assert.Equal(1, first.Count);
        Assert.Equal(1, second.Count);
    }

    [Fact]
    public void GrowsPastItsInitialCapacity()
    {
        var server = new NatsServer(new ServerOptions());
        var batch = new FlushBatch(server);
        for (var i = 0; i < 40; i++)
        {
            batch.Add(InternalClient.Create(server, (ulong)i + 1, server.GlobalAccount, NullLogger.Instance));
        }
        Assert.Equal(40, batch.Count);
        batch.FlushAll();
        Assert.Equal(0, batch.Count);
    }
}
