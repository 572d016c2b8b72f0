using System.Diagnostics;
using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Tls;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// Auth callout in server configuration mode (nats-server 2.10, so no Go 2.9.10 to compare with): a
/// callout service written with NATS.Net decides who connects, into which account and with which
/// permissions; broken or missing answers refuse the client without affecting anyone else.
/// </summary>
public sealed class AuthCalloutTests
{
    private readonly KeyPair _issuer = JwtMinter.NewKey(PrefixByte.Account);

    private ServerSettings Settings(KeyPair? xkey = null, int timeoutSeconds = 10)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add("accounts { AUTH { users: [ { user: auth, password: pwd } ] }, APP {} }");
        settings.RawConfig.Add($"authorization {{ timeout: {timeoutSeconds}, auth_callout {{ issuer: {_issuer.GetPublicKey()}, auth_users: [ auth ], account: AUTH"
            + (xkey is null ? "" : $", xkey: {xkey.GetPublicKey()}") + " } }");
        return settings;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Callout_admits_a_user_into_the_account_with_the_permissions_it_grants(bool encrypted)
    {
        var xkey = encrypted ? KeyPair.CreatePair(PrefixByte.Curve) : null;
        await using var server = await TestServers.StartOursAsync(Settings(xkey));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = UserNameDecisions.Service(url, _issuer, xkey);
        await service.StartAsync();

        await using var alice = await ConnectAsync(url, "alice", "pw");
        await using var carol = await ConnectAsync(url, "carol", "pw");
        Assert.Equal(encrypted, service.LastRequest.ServerXkey is not null);
        var request = service.LastRequest.Claims;
        var token = service.LastRequest.Token.Split('.');
        Assert.Equal("nats-authorization-request", request["aud"]!.GetValue<string>());
        Assert.Equal(_issuer.GetPublicKey(), request["sub"]!.GetValue<string>());
        Assert.Equal(carol.ServerInfo!.Id, request["iss"]!.GetValue<string>());
        Assert.True(KeyPair.FromPublicKey(request["iss"]!.GetValue<string>()).Verify(
            Encoding.ASCII.GetBytes(token[0] + "." + token[1]), Convert.FromBase64String(Pad(token[2]))));
        Assert.Equal("pw", request["nats"]!["connect_opts"]!["pass"]!.GetValue<string>());
        Assert.Equal("authorization_request", request["nats"]!["type"]!.GetValue<string>());

        // Both are in APP: carol hears alice; a publish outside greet.> is refused.
        await using var sub = await carol.SubscribeCoreAsync<string>("greet.>");
        await carol.PingAsync();
        await alice.PublishAsync("greet.a", "hello");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal("hello", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        var violation = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        alice.ServerError += (_, e) =>
        {
            violation.TrySetResult(e.Error);
            return ValueTask.CompletedTask;
        };
        await alice.PublishAsync("secret", "x");
        Assert.Contains("Permissions Violation for Publish to \"secret\"", await violation.Task.WaitAsync(TimeSpan.FromSeconds(30)), StringComparison.Ordinal);

        // The service's error refuses; the auth user with a wrong password is refused by the configuration.
        await AssertRefusedAsync(url, "bob", "pw");
        await AssertRefusedAsync(url, "auth", "wrong");
    }

    [Theory]
    [InlineData("wrongissuer", "Wrong issuer for auth callout response on account \"AUTH\"")]
    [InlineData("badsig", "Claim failed V2 signature verification")]
    [InlineData("wrongaud", "Auth callout violation: auth callout response is not for server")]
    [InlineData("wronguser", "Auth callout violation: auth callout response is not for expected user")]
    [InlineData("expired", "Authorization response had validation errors: claim is expired")]
    [InlineData("userkey", "Expected authorized user of \"U")]
    [InlineData("noaccount", "No valid account \"NOPE\" for auth callout response on account \"AUTH\"")]
    [InlineData("bob", "Auth callout service returned an error: bob is not welcome")]
    public async Task A_bad_response_refuses_the_client_and_others_still_connect(string user, string logged)
    {
        await using var server = await LoggedServer.StartAsync(Settings());
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = UserNameDecisions.Service(url, _issuer, null);
        await service.StartAsync();
        await AssertRefusedAsync(url, user, "pw");
        Assert.Equal(1, service.RequestCount);
        await server.Log.WaitForAsync(logged);
        await using var alice = await ConnectAsync(url, "alice", "pw");
        await alice.PingAsync();
    }

    [Fact]
    public async Task A_service_that_does_not_answer_refuses_after_the_auth_timeout_while_others_connect()
    {
        const int timeoutSeconds = 3;
        await using var server = await LoggedServer.StartAsync(Settings(timeoutSeconds: timeoutSeconds));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = UserNameDecisions.Service(url, _issuer, null);
        await service.StartAsync();
        var clock = Stopwatch.StartNew();
        var silent = AssertRefusedAsync(url, "silent", "pw");
        await using (var alice = await ConnectAsync(url, "alice", "pw"))
        {
            await alice.PingAsync();
        }
        await silent;
        await server.Log.WaitForAsync("Authorization callout response not received in time on account \"AUTH\"");
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(timeoutSeconds - 0.5), $"refused after {clock.Elapsed}");
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string user, string password)
    {
        var nats = new NatsConnection(new NatsOpts { Url = url, AuthOpts = new NatsAuthOpts { Username = user, Password = password }, MaxReconnectRetry = 0 });
        await nats.ConnectAsync();
        return nats;
    }

    private static async Task AssertRefusedAsync(string url, string user, string password)
    {
        await using var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            AuthOpts = new NatsAuthOpts { Username = user, Password = password },
            MaxReconnectRetry = 0,
            ConnectTimeout = TimeSpan.FromSeconds(30),
        });
        var error = await Assert.ThrowsAnyAsync<Exception>(async () => await nats.ConnectAsync());
        Assert.Contains("Authorization Violation", error.ToString(), StringComparison.OrdinalIgnoreCase);
    }

    private static string Pad(string s)
    {
        s = s.Replace('-', '+').Replace('_', '/');
        return s + new string('=', (4 - s.Length % 4) % 4);
    }
}
