using System.Collections.Concurrent;
using Nats.Server.IntegrationTests.Operations;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// A configuration reload with auth callout, as Go 2.10's reload.go and auth.go do it (no Go 2.10 here to
/// compare with): every client the callout admitted is checked again, so the service is asked again and
/// a refusal now closes the client; one whose CONNECT named a user, or whose admitted user JWT has a name
/// (Go puts it in the connection's user name), that the configuration does not have counts as moved and is
/// closed ("Client Closed"); a change to the auth_callout block is refused.
/// </summary>
public sealed class CalloutReloadTests
{
    private readonly KeyPair _issuer = JwtMinter.NewKey(PrefixByte.Account);

    private string Config(bool callout = true, string extra = "") =>
        "accounts { AUTH { users: [ { user: auth, password: pwd } ] }, APP {} }\n"
        + "authorization { timeout: 10"
        + (callout ? $", auth_callout {{ issuer: {_issuer.GetPublicKey()}, auth_users: [ auth ], account: AUTH }}" : "")
        + " }\n" + extra;

    [Fact]
    public async Task Reload_asks_the_service_again_and_closes_whom_it_now_refuses()
    {
        var denied = new ConcurrentDictionary<string, bool>();
        await using var server = await OpsServer.StartAsync("ours", Config());
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { Username = "auth", Password = "pwd" }, null, r =>
            denied.ContainsKey(r.ClientToken)
                ? CalloutService.Response(_issuer, r, error: "not any more")
                : CalloutService.Response(_issuer, r, jwt: UserNameDecisions.UserJwt(_issuer, r.UserNkey, name: r.ClientToken == "t3" ? "dave" : "")));
        await service.StartAsync();

        await using var named = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t3\"}");
        await using var byToken = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t1\"}");
        await using var byName = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"user\":\"carol\",\"pass\":\"pw\"}");
        Assert.Empty(await byToken.ExchangeAsync("SUB greet.x 1\r\n"));
        Assert.Equal(3, service.RequestCount);

        Assert.Null(await server.ReloadAsync(Config(extra: "ping_interval: \"1m\"\n")));
        // The token client was asked about again and stays; carol and dave are no configured users: closed without -ERR.
        Assert.Equal(4, service.RequestCount);
        Assert.Equal("t1", service.LastRequest.ClientToken);
        Assert.Equal(["[closed]"], await byName.ReadUntilClosedAsync());
        Assert.Equal(["[closed]"], await named.ReadUntilClosedAsync());
        Assert.Equal(["MSG greet.x 1 2", "hi"], await byToken.ExchangeAsync("PUB greet.x 2\r\nhi\r\n"));

        denied["t1"] = true;
        Assert.Null(await server.ReloadAsync(Config(extra: "ping_interval: \"2m\"\n")));
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], await byToken.ReadUntilClosedAsync());

        // The service, an auth user of the configuration, is untouched by both reloads.
        await service.Connection.PingAsync();
        Assert.Equal(NatsConnectionState.Open, service.Connection.ConnectionState);
    }

    [Fact]
    public async Task A_change_to_the_auth_callout_block_is_refused_and_the_callout_stays()
    {
        await using var server = await OpsServer.StartAsync("ours", Config());
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { Username = "auth", Password = "pwd" }, null,
            r => CalloutService.Response(_issuer, r, jwt: UserNameDecisions.UserJwt(_issuer, r.UserNkey)));
        await service.StartAsync();
        await using var client = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t1\"}");

        Assert.Equal($"config reload not supported for AuthCallout: old=&{{{_issuer.GetPublicKey()} AUTH [auth] }}, new=<nil>",
            await server.ReloadAsync(Config(callout: false)));
        Assert.Equal(1, service.RequestCount);
        Assert.Empty(await client.ExchangeAsync());
        await using var next = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t2\"}");
        Assert.Equal(2, service.RequestCount);
    }
}
