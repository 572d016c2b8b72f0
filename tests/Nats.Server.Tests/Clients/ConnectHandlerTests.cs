using Nats.Server.Clients;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class ConnectHandlerTests
{
    private static async Task<PipeClient> ConnectAsync(string connect, ServerOptions? options = null)
    {
        var client = new PipeClient(options);
        await client.ReadUntilAsync("INFO {}\r\n");
        await client.SendAsync("CONNECT " + connect + "\r\n");
        return client;
    }

    [Fact]
    public async Task AValidConnect_TakesTheClientsChoices()
    {
        await using var client = await ConnectAsync("{\"verbose\":false,\"echo\":false,\"headers\":true,\"name\":\"n\"}");
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
        Assert.True(client.Connection.ConnectReceived);
        Assert.Equal("n", client.Connection.Name);
        Assert.False(client.Connection.Settings.Echo);
        Assert.True(client.Connection.Settings.Headers);
    }

    [Fact]
    public async Task ConnectThatIsNotAJsonObject_Closes()
    {
        await using var client = await ConnectAsync("[1]");
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.ProtocolViolation, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task AWrongPassword_GetsAuthorizationViolation()
    {
        await using var client = await ConnectAsync("{\"verbose\":false,\"user\":\"u\",\"pass\":\"wrong\"}",
            new ServerOptions { Username = "u", Password = "p" });
        Assert.Equal("-ERR 'Authorization Violation'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.AuthenticationViolation, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task TheRightPassword_Authenticates()
    {
        await using var client = await ConnectAsync("{\"verbose\":false,\"user\":\"u\",\"pass\":\"p\"}",
            new ServerOptions { Username = "u", Password = "p" });
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG\r\n", await client.ReadUntilAsync("PONG\r\n"));
        Assert.False(client.Connection.Settings.AwaitingAuth);
        Assert.Equal(0, client.Connection.Settings.AuthDeadlineTicks);
    }

    [Fact]
    public async Task AnUnknownProtocolVersion_IsRefused()
    {
        await using var client = await ConnectAsync("{\"verbose\":false,\"protocol\":2}");
        Assert.Equal("-ERR 'invalid client protocol'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.BadClientProtocolVersion, client.Connection.ClosedReason);
    }

    [Fact]
    public async Task NoRespondersWithoutHeaders_IsRefused()
    {
        await using var client = await ConnectAsync("{\"verbose\":false,\"no_responders\":true,\"headers\":false}");
        Assert.Equal("-ERR 'no responders requires headers support'\r\n", await client.ReadUntilAsync("\r\n"));
        await client.WaitClosedAsync();
        Assert.Equal(ClosedReason.NoRespondersRequiresHeaders, client.Connection.ClosedReason);
    }
}
