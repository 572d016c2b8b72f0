using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Clients;

public class StallListTests
{
    [Fact]
    public async Task WaitsOncePerSubscriber_ThenEmpties()
    {
        var server = new NatsServer(new ServerOptions());
        var a = InternalClient.Create(server, 1, server.GlobalAccount, NullLogger.Instance);
        var b = InternalClient.Create(server, 2, server.GlobalAccount, NullLogger.Instance);
        var stalls = new StallList();
        Assert.False(stalls.MustStall);

        stalls.Add(a.Delivery);
        stalls.Add(b.Delivery);
        stalls.Add(a.Delivery);
        Assert.True(stalls.MustStall);
        Assert.Equal(2, stalls.Count);

        // Neither queue holds a stall gate, so each wait returns at once; each counts one stall.
        await stalls.WaitAllAsync();
        Assert.False(stalls.MustStall);
        Assert.Equal(1, a.Stalls);
        Assert.Equal(1, b.Stalls);
        Assert.False(a.IsClosed);
    }
}
