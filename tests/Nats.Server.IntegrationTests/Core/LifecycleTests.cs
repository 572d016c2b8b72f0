namespace Nats.Server.IntegrationTests.Core;

public class LifecycleTests
{
    [Fact]
    public async Task Shutdown_FlushesAndClosesEveryClient()
    {
        var server = await TestServer.StartAsync();
        var port = server.Port;
        await using var client = await RawClient.ConnectAsync(port);
        await client.ConnectAndReadInfoAsync();
        await client.SendAsync("SUB foo 1\r\nPUB foo 2\r\nhi\r\n");
        await client.SyncAsync();

        await server.DisposeAsync();
        Assert.Equal("", await client.ReadToEndAsync());
        Assert.Equal(0, server.Server.ClientCount);
        await Assert.ThrowsAnyAsync<System.Net.Sockets.SocketException>(async () => await RawClient.ConnectAsync(port));
    }

    [Fact]
    public async Task ClientDisconnect_RemovesItsSubscriptions()
    {
        await using var server = await TestServer.StartAsync();
        // $G holds the server's own system-service subscriptions (3, as in Go) from the start.
        var own = server.Server.GlobalAccount.SubList.Count;
        await using (var client = await RawClient.ConnectAsync(server.Port))
        {
            await client.ConnectAndReadInfoAsync();
            await client.SendAsync("SUB foo 1\r\nSUB bar q 2\r\n");
            await client.SyncAsync();
            Assert.Equal(own + 2, server.Server.GlobalAccount.SubList.Count);
        }
        await using var observer = await RawClient.ConnectAsync(server.Port);
        await observer.ConnectAndReadInfoAsync();
        // Closing is asynchronous on the server side: wait for the event, not for time.
        for (var i = 0; i < 200 && server.Server.GlobalAccount.SubList.Count != own; i++)
        {
            await observer.SyncAsync();
        }
        Assert.Equal(own, server.Server.GlobalAccount.SubList.Count);
    }

    [Fact]
    public async Task QueueGroup_DeliversEachMessageToExactlyOneMember()
    {
        await using var server = await TestServer.StartAsync();
        var members = new List<RawClient>();
        for (var i = 0; i < 3; i++)
        {
            var member = await RawClient.ConnectAsync(server.Port);
            await member.ConnectAndReadInfoAsync();
            await member.SendAsync("SUB work workers 1\r\n");
            await member.SyncAsync();
            members.Add(member);
        }
        await using var publisher = await RawClient.ConnectAsync(server.Port);
        await publisher.ConnectAndReadInfoAsync();
        const int count = 300;
        var text = string.Concat(Enumerable.Range(0, count).Select(i => $"PUB work {i.ToString().Length}\r\n{i}\r\n"));
        await publisher.SendAsync(text);
        await publisher.SyncAsync();

        var received = new List<int>();
        foreach (var member in members)
        {
            var transcript = await member.SyncAsync();
            var lines = transcript.Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
            for (var i = 0; i < lines.Length - 1; i += 2)
            {
                Assert.StartsWith("MSG work 1 ", lines[i]);
                received.Add(int.Parse(lines[i + 1]));
            }
            await member.DisposeAsync();
        }
        Assert.Equal(Enumerable.Range(0, count), received.Order());
    }
}
