using System.Text.Json.Nodes;
using Nats.Server.Tests.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// Operator mode logins: the same generated operator, accounts and users against Go 2.9.10 and ours,
/// with the same answers (accepted, -ERR texts, permission violations, limits).
/// </summary>
public sealed class OperatorConnectDifferentialTests
{
    private const string Violation = "-ERR 'Authorization Violation'";

    [Fact]
    public async Task Signed_user_jwt_logs_in_and_publishes()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User();
        var transcript = await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, key, nonce), "SUB a 1\r\nPUB a 2\r\nhi\r\n");
        Assert.Equal(["+OK", "+OK", "+OK", "MSG a 1 2", "hi", "PONG"], transcript);
    }

    [Fact]
    public async Task Missing_jwt_missing_or_wrong_signature_are_refused()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User();
        var settings = f.Settings();
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, _ => "{\"verbose\":true}"));
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, null, nonce)));
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, JwtMinter.NewKey(PrefixByte.User), nonce)));
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, "other" + nonce)));
    }

    [Fact]
    public async Task Malformed_and_forged_jwts_are_refused()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User();
        var settings = f.Settings();
        var parts = jwt.Split('.');
        string[] bad =
        [
            "not-a-jwt",
            parts[0] + "." + parts[1],
            parts[0] + "." + parts[1] + "." + JwtMinter.B64(new byte[64]),
            JwtMinter.Sign(JwtMinter.NewKey(PrefixByte.Account), JwtMinter.Header, "{\"sub\":\"x\"}"),
            JwtMinter.Sign(f.Account, "{\"typ\":\"JWT\",\"alg\":\"RS256\"}", "{}"),
        ];
        foreach (var token in bad)
        {
            Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(token, key, nonce)));
        }
        // An oversized JWT never reaches authentication: the CONNECT line is too long.
        Assert.Equal(["-ERR 'maximum control line exceeded'", "[closed]"],
            await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(new string('x', 200_000), key, nonce)));
    }

    [Fact]
    public async Task Unknown_signer_and_unknown_account_are_refused()
    {
        var f = new OperatorFixture();
        var stranger = JwtMinter.NewKey(PrefixByte.Account);
        var (key, jwt) = f.User(signer: stranger);
        var settings = f.Settings();
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, nonce)));
        // Claims to be issued for the account by a key the account does not list.
        var (key2, jwt2) = f.User(n => n["issuer_account"] = f.Account.GetPublicKey(), signer: stranger);
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt2, key2, nonce)));
    }

    [Fact]
    public async Task Expired_and_not_yet_valid_users_are_refused()
    {
        var f = new OperatorFixture();
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var (key, jwt) = f.User(top: t => t["exp"] = now - 5);
        var settings = f.Settings();
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, nonce)));
        var (key2, jwt2) = f.User(top: t => t["nbf"] = now + 3600);
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt2, key2, nonce)));
    }

    [Fact]
    public async Task Bearer_token_needs_no_signature_unless_the_account_disallows_it()
    {
        var f = new OperatorFixture();
        var (_, jwt) = f.User(n => n["bearer_token"] = true);
        Assert.Equal(["+OK", "PONG"], await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, null, nonce)));

        var strict = new OperatorFixture(a => ((JsonObject)a["limits"]!)["disallow_bearer"] = true);
        var (_, jwt2) = strict.User(n => n["bearer_token"] = true);
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(strict.Settings(), nonce => OperatorFixture.Connect(jwt2, null, nonce)));
    }

    [Fact]
    public async Task User_permissions_and_allow_responses_apply()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User(n =>
        {
            n["pub"] = new JsonObject { ["allow"] = new JsonArray("ok.>"), ["deny"] = new JsonArray("ok.no") };
            n["sub"] = new JsonObject { ["deny"] = new JsonArray("secret") };
        });
        var transcript = await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, key, nonce),
            "SUB secret 1\r\nSUB ok.* 2\r\nPUB ok.yes 1\r\nx\r\nPUB ok.no 1\r\nx\r\nPUB other 1\r\nx\r\n");
        Assert.Equal(
        [
            "+OK", "-ERR 'Permissions Violation for Subscription to \"secret\"'", "+OK", "+OK", "MSG ok.yes 2 1", "x",
            "-ERR 'Permissions Violation for Publish to \"ok.no\"'", "-ERR 'Permissions Violation for Publish to \"other\"'", "PONG",
        ], transcript);
    }

    [Fact]
    public async Task Account_default_permissions_apply_to_users_without_their_own()
    {
        var f = new OperatorFixture(a => a["default_permissions"] = new JsonObject { ["pub"] = new JsonObject { ["deny"] = new JsonArray("x") } });
        var (key, jwt) = f.User();
        var transcript = await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, key, nonce), "PUB x 0\r\n\r\n");
        Assert.Equal(["+OK", "-ERR 'Permissions Violation for Publish to \"x\"'", "PONG"], transcript);
    }

    [Fact]
    public async Task Revoked_user_is_refused()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User();
        var userKey = JwtDecoderFacade.Subject(jwt);
        f.Accounts[f.Account.GetPublicKey()] = JwtMinter.Account(f.Operator, f.Account.GetPublicKey(),
            a => a["revocations"] = new JsonObject { [userKey] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 10 });
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, key, nonce)));
    }

    [Fact]
    public async Task Source_networks_and_connection_types_are_enforced()
    {
        var f = new OperatorFixture();
        var settings = f.Settings();
        var (key, jwt) = f.User(n => n["src"] = new JsonArray("10.0.0.0/8"));
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, nonce)));
        var (key2, jwt2) = f.User(n => n["src"] = "10.0.0.0/8, 127.0.0.0/8");
        Assert.Equal(["+OK", "PONG"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt2, key2, nonce)));
        var (key3, jwt3) = f.User(n => n["allowed_connection_types"] = new JsonArray("WEBSOCKET"));
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt3, key3, nonce)));
        var (key4, jwt4) = f.User(n => n["allowed_connection_types"] = new JsonArray("standard"));
        Assert.Equal(["+OK", "PONG"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt4, key4, nonce)));
    }

    [Fact]
    public async Task Connect_times_outside_the_window_are_refused()
    {
        var f = new OperatorFixture();
        var now = DateTime.UtcNow;
        var start = now.AddHours(-3).ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture);
        var end = now.AddHours(-2).ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture);
        var (key, jwt) = f.User(n =>
        {
            n["times"] = new JsonArray(new JsonObject { ["start"] = start, ["end"] = end });
            n["times_location"] = "UTC";
        });
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(f.Settings(), nonce => OperatorFixture.Connect(jwt, key, nonce)));
    }

    [Fact]
    public async Task Signing_keys_and_scoped_templates()
    {
        var signer = JwtMinter.NewKey(PrefixByte.Account);
        var scoped = JwtMinter.NewKey(PrefixByte.Account);
        var f = new OperatorFixture(a => a["signing_keys"] = new JsonArray(
            signer.GetPublicKey(),
            new JsonObject
            {
                ["kind"] = "user_scope",
                ["key"] = scoped.GetPublicKey(),
                ["role"] = "r",
                ["template"] = new JsonObject { ["pub"] = new JsonObject { ["allow"] = new JsonArray("user.{{name()}}.>") } },
            }));
        var settings = f.Settings();
        var accountKey = f.Account.GetPublicKey();
        var (key, jwt) = f.User(n => n["issuer_account"] = accountKey, signer: signer);
        Assert.Equal(["+OK", "+OK", "PONG"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, nonce), "PUB any 0\r\n\r\n"));

        var userKey = JwtMinter.NewKey(PrefixByte.User);
        var scopedJwt = JwtMinter.Encode(scoped, userKey.GetPublicKey(), "user", n => n["issuer_account"] = accountKey, t => t["name"] = "bob");
        Assert.Equal(["+OK", "+OK", "-ERR 'Permissions Violation for Publish to \"user.alice.x\"'", "PONG"],
            await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(scopedJwt, userKey, nonce), "PUB user.bob.x 0\r\n\r\nPUB user.alice.x 0\r\n\r\n"));

        // A scoped key's user may not carry permissions of its own.
        var (key3, jwt3) = f.User(n => n["issuer_account"] = accountKey, signer: scoped);
        Assert.Equal([Violation, "[closed]"], await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt3, key3, nonce)));
    }

    [Fact]
    public async Task Account_and_user_limits()
    {
        var f = new OperatorFixture(a => ((JsonObject)a["limits"]!)["subs"] = 2);
        var settings = f.Settings();
        var (key, jwt) = f.User();
        // The third SUB is acknowledged before the limit error, by both.
        Assert.Equal(["+OK", "+OK", "+OK", "-ERR 'maximum subscriptions exceeded'", "PONG"],
            await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt, key, nonce), "SUB a 1\r\nSUB b 2\r\nSUB c 3\r\n"));
        var (key2, jwt2) = f.User(n => n["payload"] = 4);
        Assert.Equal(["+OK", "-ERR 'Maximum Payload Violation'", "[closed]"],
            await JwtTranscript.BothAsync(settings, nonce => OperatorFixture.Connect(jwt2, key2, nonce), "PUB a 5\r\nhello\r\n"));
    }
}

/// <summary>Reads a JWT's subject without verifying it (test bookkeeping).</summary>
internal static class JwtDecoderFacade
{
    public static string Subject(string jwt) => Nats.Server.Auth.Jwt.JwtDecoder.Decode(jwt).Subject;
}
