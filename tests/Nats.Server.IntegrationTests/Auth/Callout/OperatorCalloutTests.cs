using System.Diagnostics;
using System.Text;
using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Auth.Jwt;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Tls;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// Auth callout in operator mode (nats-server 2.10, so no Go 2.9.10 to compare with; the checks follow
/// Go's auth_callout.go): the AUTH account JWT's authorization block names the service user and the
/// accounts it may place clients in; clients log in with a shared bearer "sentinel" user of AUTH and a
/// token, and a NATS.Net service decides who they become.
/// </summary>
public sealed class OperatorCalloutTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-callout-op-").FullName;
    private readonly OperatorFixture _f = new();
    private readonly KeyPair _auth = JwtMinter.NewKey(PrefixByte.Account);
    private readonly KeyPair _authSigning = JwtMinter.NewKey(PrefixByte.Account);
    private readonly KeyPair _appScoped = JwtMinter.NewKey(PrefixByte.Account);
    private readonly KeyPair _other = JwtMinter.NewKey(PrefixByte.Account);
    private readonly KeyPair _service = JwtMinter.NewKey(PrefixByte.User);
    private readonly KeyPair _stranger = JwtMinter.NewKey(PrefixByte.Account);

    private string App => _f.Account.GetPublicKey();

    private ServerSettings Settings(KeyPair? xkey, double? authTimeoutSeconds = null)
    {
        _f.Accounts[App] = JwtMinter.Account(_f.Operator, App, n => n["signing_keys"] = new JsonArray(new JsonObject
        {
            ["kind"] = "user_scope",
            ["key"] = _appScoped.GetPublicKey(),
            ["role"] = "scoped",
            ["template"] = new JsonObject
            {
                ["pub"] = new JsonObject { ["allow"] = new JsonArray("scoped.{{name()}}.>") },
                ["sub"] = new JsonObject { ["allow"] = new JsonArray("scoped.>") },
                ["subs"] = -1,
                ["data"] = -1,
                ["payload"] = -1,
            },
        }));
        _f.Accounts[_auth.GetPublicKey()] = JwtMinter.Account(_f.Operator, _auth.GetPublicKey(), n =>
        {
            var authorization = new JsonObject
            {
                ["auth_users"] = new JsonArray(_service.GetPublicKey()),
                ["allowed_accounts"] = new JsonArray(App),
            };
            if (xkey is not null)
            {
                authorization["xkey"] = xkey.GetPublicKey();
            }
            n["authorization"] = authorization;
            n["signing_keys"] = new JsonArray(_authSigning.GetPublicKey());
        });
        _f.Accounts[_other.GetPublicKey()] = JwtMinter.Account(_f.Operator, _other.GetPublicKey());
        var settings = _f.Settings();
        if (authTimeoutSeconds is { } timeout)
        {
            settings.AuthTimeoutSeconds = timeout;
        }
        return settings;
    }

    /// <summary>The service's answers, by the client's auth_token.</summary>
    private string? Decide(CalloutRequest r) => r.ClientToken switch
    {
        "alice" => CalloutService.Response(_auth, r, jwt: JwtMinter.User(_f.Account, r.UserNkey, n =>
            n["pub"] = new JsonObject { ["allow"] = new JsonArray("greet.>", "_INBOX.>") }, t => t["name"] = "alice")),
        "expiring" => CalloutService.Response(_auth, r, jwt: JwtMinter.User(_f.Account, r.UserNkey, top: t =>
            t["exp"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 2)),
        "self" => CalloutService.Response(_auth, r, jwt: JwtMinter.User(_auth, r.UserNkey)),
        "scoped" => CalloutService.Response(_auth, r, jwt: JwtMinter.Encode(_appScoped, r.UserNkey, "user",
            n => n["issuer_account"] = App, t => t["name"] = "sam")),
        "bysigningkey" => CalloutService.Response(_authSigning, r, issuerAccount: _auth.GetPublicKey(),
            jwt: JwtMinter.User(_f.Account, r.UserNkey)),
        "other" => CalloutService.Response(_auth, r, jwt: JwtMinter.User(_other, r.UserNkey)),
        "stranger" => CalloutService.Response(_stranger, r, jwt: JwtMinter.User(_f.Account, r.UserNkey)),
        "unknownissuer" => CalloutService.Response(_auth, r, jwt: JwtMinter.User(_stranger, r.UserNkey, n => n["issuer_account"] = App)),
        "bob" => CalloutService.Response(_auth, r, error: "bob is not welcome"),
        _ => null,
    };

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task The_service_places_a_sentinel_client_in_an_allowed_account_with_the_permissions_it_grants(bool encrypted)
    {
        var xkey = encrypted ? KeyPair.CreatePair(PrefixByte.Curve) : null;
        await using var server = await TestServers.StartOursAsync(Settings(xkey));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { CredsFile = ServiceCreds() }, xkey, Decide);
        await service.StartAsync();
        var (sentinelKey, sentinel, sentinelJwt) = Sentinel();

        await using var alice = await ConnectAsync(url, sentinel, "alice");
        var request = service.Requests.Single();
        Assert.Equal(encrypted, request.ServerXkey is not null);
        var claims = request.Claims;
        Assert.Equal("nats-authorization-request", claims["aud"]!.GetValue<string>());
        Assert.Equal(_auth.GetPublicKey(), claims["sub"]!.GetValue<string>());
        Assert.Equal(alice.ServerInfo!.Id, claims["iss"]!.GetValue<string>());
        var parts = request.Token.Split('.');
        Assert.True(KeyPair.FromPublicKey(alice.ServerInfo.Id).Verify(Encoding.ASCII.GetBytes(parts[0] + "." + parts[1]),
            Convert.FromBase64String(CalloutService.B64Pad(parts[2]))));
        var nats = claims["nats"]!;
        Assert.Equal(request.ServerXkey, nats["server_id"]!["xkey"]?.GetValue<string>());
        Assert.Equal(sentinelJwt, nats["connect_opts"]!["jwt"]!.GetValue<string>());
        Assert.Equal(sentinelKey.GetPublicKey(), nats["client_info"]!["user"]!.GetValue<string>());

        // alice is in APP: a user of APP hears her; the sentinel's zero subs and payload limits stayed behind.
        await using var appUser = await ConnectCredsAsync(url, UserCreds(_f.Account, "app"));
        await using var sub = await appUser.SubscribeCoreAsync<string>("greet.>");
        await using var own = await alice.SubscribeCoreAsync<string>("greet.>");
        await appUser.PingAsync();
        await alice.PingAsync();
        await alice.PublishAsync("greet.a", "hello");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal("hello", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("hello", (await own.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Contains("Permissions Violation for Publish to \"secret\"", await ViolationAsync(alice, "secret"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("other", "Account \"{other}\" not permitted as valid account option for auth callout for account \"{auth}\"")]
    [InlineData("stranger", "Auth callout signing key is unknown")]
    [InlineData("unknownissuer", "User JWT issuer \"{stranger}\" is not known")]
    [InlineData("bob", "Auth callout service returned an error: bob is not welcome")]
    public async Task A_refused_client_is_logged_as_go_and_reported_in_the_callout_account(string token, string logged)
    {
        await using var server = await LoggedServer.StartAsync(Settings(null));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { CredsFile = ServiceCreds() }, null, Decide);
        await service.StartAsync();
        await using var events = await service.Connection.SubscribeCoreAsync<string>("$SYS.ACCOUNT.CLIENT.AUTH.ERR");
        await service.Connection.PingAsync();
        var (_, sentinel, _) = Sentinel();

        await AssertRefusedAsync(url, sentinel, token);
        await server.Log.WaitForAsync(logged.Replace("{other}", _other.GetPublicKey(), StringComparison.Ordinal)
            .Replace("{auth}", _auth.GetPublicKey(), StringComparison.Ordinal).Replace("{stranger}", _stranger.GetPublicKey(), StringComparison.Ordinal));
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var advisory = JsonNode.Parse((await events.Msgs.ReadAsync(cts.Token)).Data!)!;
        Assert.Equal("io.nats.server.advisory.v1.client_disconnect", advisory["type"]!.GetValue<string>());
        Assert.Equal(_auth.GetPublicKey(), advisory["client"]!["acc"]!.GetValue<string>());
        Assert.Equal("Authentication Failure", advisory["reason"]!.GetValue<string>());

        await using var alice = await ConnectAsync(url, sentinel, "alice");
        await alice.PingAsync();
    }

    [Fact]
    public async Task Signing_keys_and_scopes_place_users_and_the_callout_account_may_not_publish_requests()
    {
        await using var server = await TestServers.StartOursAsync(Settings(null));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { CredsFile = ServiceCreds() }, null, Decide);
        await service.StartAsync();
        var (_, sentinel, _) = Sentinel();

        // The auth service user itself (an auth_user) and a client the service placed in AUTH get the deny.
        Assert.Contains("Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"", await ViolationAsync(service.Connection, "$SYS.REQ.USER.AUTH"), StringComparison.Ordinal);
        await using var self = await ConnectAsync(url, sentinel, "self");
        Assert.Contains("Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"", await ViolationAsync(self, "$SYS.REQ.USER.AUTH"), StringComparison.Ordinal);

        // A user of APP issued by its scoped signing key gets the key's template.
        await using var sam = await ConnectAsync(url, sentinel, "scoped");
        await using var appUser = await ConnectCredsAsync(url, UserCreds(_f.Account, "app"));
        await using var sub = await appUser.SubscribeCoreAsync<string>("scoped.>");
        await appUser.PingAsync();
        await sam.PublishAsync("scoped.sam.x", "hi");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal("hi", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Contains("Permissions Violation for Publish to \"scoped.bob.x\"", await ViolationAsync(sam, "scoped.bob.x"), StringComparison.Ordinal);

        // A response signed by a signing key of AUTH is accepted.
        await using var signed = await ConnectAsync(url, sentinel, "bysigningkey");
        await signed.PingAsync();
    }

    [Fact]
    public async Task A_user_jwt_that_expires_disconnects_the_client()
    {
        await using var server = await TestServers.StartOursAsync(Settings(null));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { CredsFile = ServiceCreds() }, null, Decide);
        await service.StartAsync();
        var (_, sentinel, _) = Sentinel();
        await using var client = await ConnectAsync(url, sentinel, "expiring");
        var expired = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        client.ServerError += (_, e) =>
        {
            expired.TrySetResult(e.Error);
            return ValueTask.CompletedTask;
        };
        Assert.Contains("User Authentication Expired", await expired.Task.WaitAsync(TimeSpan.FromSeconds(30)), StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task A_service_that_does_not_answer_refuses_after_the_auth_timeout_while_others_connect()
    {
        const int timeoutSeconds = 3;
        await using var server = await LoggedServer.StartAsync(Settings(null, timeoutSeconds));
        var url = $"nats://127.0.0.1:{server.Port}";
        await using var service = new CalloutService(url, new NatsAuthOpts { CredsFile = ServiceCreds() }, null, Decide);
        await service.StartAsync();
        var (_, sentinel, _) = Sentinel();
        var clock = Stopwatch.StartNew();
        var silent = AssertRefusedAsync(url, sentinel, "silent");
        await using (var alice = await ConnectAsync(url, sentinel, "alice"))
        {
            await alice.PingAsync();
        }
        await silent;
        await server.Log.WaitForAsync($"Authorization callout response not received in time on account \"{_auth.GetPublicKey()}\"");
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(timeoutSeconds - 0.5), $"refused after {clock.Elapsed}");
    }

    [Fact]
    public async Task A_callout_service_written_with_nats_go_opens_sealed_requests_and_seals_its_answers()
    {
        var xkey = KeyPair.CreatePair(PrefixByte.Curve);
        await using var server = await TestServers.StartOursAsync(Settings(xkey));
        var url = $"nats://127.0.0.1:{server.Port}";
        var binary = await Clients.NatsGoProgram.BuildAsync("calloutservice");
        using var go = Process.Start(new ProcessStartInfo(binary, [url, ServiceCreds(), _auth.GetSeed(), _f.Account.GetSeed(), xkey.GetSeed()])
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!;
        var errors = go.StandardError.ReadToEndAsync();
        try
        {
            var ready = await go.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(60));
            if (ready != "ready")
            {
                Assert.Fail($"calloutservice: {ready} {await errors}");
            }
            var (_, sentinel, _) = Sentinel();
            await using (var alice = await ConnectAsync(url, sentinel, "go-alice"))
            {
                await using var appUser = await ConnectCredsAsync(url, UserCreds(_f.Account, "app"));
                await using var sub = await appUser.SubscribeCoreAsync<string>("greet.>");
                await appUser.PingAsync();
                await alice.PublishAsync("greet.go", "from go's callout");
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
                Assert.Equal("from go's callout", (await sub.Msgs.ReadAsync(cts.Token)).Data);
                Assert.Contains("Permissions Violation for Publish to \"secret\"", await ViolationAsync(alice, "secret"), StringComparison.Ordinal);
            }
            await AssertRefusedAsync(url, sentinel, "mallory");
            Assert.Equal("admitted go-alice", await go.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Equal("refused mallory", await go.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(30)));
        }
        finally
        {
            go.StandardInput.Close();
            if (!go.WaitForExit(TimeSpan.FromSeconds(30)))
            {
                go.Kill();
            }
        }
    }

    /// <summary>The shared bearer user of AUTH that every client logs in with: no permissions, no subscriptions, no payload.</summary>
    private (KeyPair Key, string Creds, string Jwt) Sentinel()
    {
        var key = JwtMinter.NewKey(PrefixByte.User);
        var jwt = JwtMinter.User(_auth, key.GetPublicKey(), n =>
        {
            n["bearer_token"] = true;
            n["pub"] = new JsonObject { ["deny"] = new JsonArray(">") };
            n["sub"] = new JsonObject { ["deny"] = new JsonArray(">") };
            n["subs"] = 0;
            n["payload"] = 0;
        });
        var path = Path.Combine(_dir, "sentinel-" + key.GetPublicKey()[..8] + ".creds");
        File.WriteAllText(path, JwtMinter.Creds(jwt, key));
        return (key, path, jwt);
    }

    private string ServiceCreds()
    {
        var path = Path.Combine(_dir, "service.creds");
        File.WriteAllText(path, JwtMinter.Creds(JwtMinter.User(_auth, _service.GetPublicKey()), _service));
        return path;
    }

    private string UserCreds(KeyPair account, string name)
    {
        var key = JwtMinter.NewKey(PrefixByte.User);
        var path = Path.Combine(_dir, name + "-" + key.GetPublicKey()[..8] + ".creds");
        File.WriteAllText(path, JwtMinter.Creds(JwtMinter.User(account, key.GetPublicKey()), key));
        return path;
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string sentinelCreds, string token)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            AuthOpts = new NatsAuthOpts { CredsFile = sentinelCreds, Token = token },
            MaxReconnectRetry = 0,
            ConnectTimeout = TimeSpan.FromSeconds(30),
        });
        await nats.ConnectAsync();
        return nats;
    }

    private static async Task<NatsConnection> ConnectCredsAsync(string url, string creds)
    {
        var nats = new NatsConnection(new NatsOpts { Url = url, AuthOpts = new NatsAuthOpts { CredsFile = creds }, MaxReconnectRetry = 0 });
        await nats.ConnectAsync();
        return nats;
    }

    private static async Task AssertRefusedAsync(string url, string sentinelCreds, string token)
    {
        var error = await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var nats = await ConnectAsync(url, sentinelCreds, token);
        });
        Assert.Contains("Authorization Violation", error.ToString(), StringComparison.OrdinalIgnoreCase);
    }

    private static async Task<string> ViolationAsync(NatsConnection nats, string subject)
    {
        var violation = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        ValueTask Handler(object? sender, NatsServerErrorEventArgs e)
        {
            if (e.Error.Contains(subject, StringComparison.Ordinal))
            {
                violation.TrySetResult(e.Error);
            }
            return ValueTask.CompletedTask;
        }
        nats.ServerError += Handler;
        try
        {
            await nats.PublishAsync(subject, "x");
            return await violation.Task.WaitAsync(TimeSpan.FromSeconds(30));
        }
        finally
        {
            nats.ServerError -= Handler;
        }
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
