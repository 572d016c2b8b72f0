using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// Configuration reload, run the same way against the Go server (file rewritten, SIGHUP to its pid)
/// and ours (file rewritten, ReloadAsync): what connected and new clients see must match, and match
/// what Go 2.9.10 is known to do.
/// </summary>
public sealed class ReloadDifferentialTests
{
    private const string Users = """
        authorization {
          users = [
            {user: alice, password: pa, permissions: {subscribe: ["foo", "bar"]}}
            {user: bob, password: pb}
            {user: carl, password: pc}
          ]
        }
        """;

    private const string UsersChanged = """
        authorization {
          users = [
            {user: alice, password: pa, permissions: {publish: ["bar"], subscribe: ["bar"]}}
            {user: bob, password: changed}
          ]
        }
        """;

    private static string Login(string user, string password) =>
        $"{{\"verbose\":false,\"protocol\":1,\"user\":\"{user}\",\"pass\":\"{password}\"}}";

    [Fact]
    public async Task Users_reload_keeps_alice_closes_bob_and_carl_and_replaces_permissions()
    {
        var results = await BothAsync(async kind =>
        {
            var transcript = new List<string>();
            await using var server = await OpsServer.StartAsync(kind, Users);
            await using var alice = await Session.OpenAsync(server.Port, Login("alice", "pa"));
            await using var bob = await Session.OpenAsync(server.Port, Login("bob", "pb"));
            await using var carl = await Session.OpenAsync(server.Port, Login("carl", "pc"));
            transcript.AddRange(await alice.ExchangeAsync("SUB foo 1\r\nSUB bar 2\r\nPUB foo 2\r\nhi\r\n"));

            transcript.Add("reload: " + (await server.ReloadAsync(UsersChanged) ?? "ok"));
            transcript.AddRange((await alice.ExchangeAsync()).Select(l => "alice " + l));
            // Alice stays connected: she keeps publishing and receiving on what she may still use.
            transcript.AddRange((await alice.ExchangeAsync("PUB bar 3\r\nhey\r\nPUB foo 2\r\nhi\r\n")).Select(l => "alice " + l));
            transcript.AddRange((await bob.ReadUntilClosedAsync()).Select(l => "bob " + l));
            transcript.AddRange((await carl.ReadUntilClosedAsync()).Select(l => "carl " + l));

            await using var bobAgain = await Session.OpenAsync(server.Port, Login("bob", "changed"));
            transcript.AddRange((await bobAgain.ExchangeAsync("PUB foo 0\r\n\r\n")).Select(l => "new bob " + l));
            return transcript;
        });
        Assert.Equal(
        [
            "MSG foo 1 2", "hi",
            "reload: ok",
            "alice -ERR 'Permissions Violation for Subscription to \"foo\" (sid \"1\")'",
            "alice MSG bar 2 3", "alice hey", "alice -ERR 'Permissions Violation for Publish to \"foo\"'",
            "bob -ERR 'Authorization Violation'", "bob [closed]",
            "carl [closed]",
        ], results);
    }

    [Fact]
    public async Task Token_change_closes_clients_with_the_old_token()
    {
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "authorization { token: t1 }\n");
            await using var client = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t1\"}");
            var transcript = new List<string> { "reload: " + (await server.ReloadAsync("authorization { token: t2 }\n") ?? "ok") };
            transcript.AddRange(await client.ReadUntilClosedAsync());
            await using var fresh = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"auth_token\":\"t2\"}");
            transcript.AddRange(await fresh.ExchangeAsync());
            return transcript;
        });
        Assert.Equal(["reload: ok", "-ERR 'Authorization Violation'", "[closed]"], results);
    }

    [Fact]
    public async Task No_auth_user_client_survives_a_reload_until_its_user_changes()
    {
        const string config = "authorization { users = [ {user: guest, password: g1}, {user: admin, password: a1} ] }\nno_auth_user: guest\n";
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, config);
            await using var anonymous = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}");
            var transcript = new List<string> { "reload: " + (await server.ReloadAsync(config) ?? "ok") };
            // Authenticated again as the substituted user with the substituted password: still fine.
            transcript.AddRange(await anonymous.ExchangeAsync("SUB x 1\r\nPUB x 1\r\na\r\n"));
            transcript.Add("reload: " + (await server.ReloadAsync(config.Replace("g1", "g2", StringComparison.Ordinal)) ?? "ok"));
            transcript.AddRange(await anonymous.ReadUntilClosedAsync());
            return transcript;
        });
        Assert.Equal(["reload: ok", "MSG x 1 1", "a", "reload: ok", "-ERR 'Authorization Violation'", "[closed]"], results);
    }

    [Fact]
    public async Task Removed_nkey_is_closed_and_the_remaining_one_is_verified_again()
    {
        using var seedA = SeededKeyPair.Create([.. Enumerable.Range(0, 32).Select(i => (byte)(i * 3 + 5))]);
        using var seedB = SeededKeyPair.Create([.. Enumerable.Range(0, 32).Select(i => (byte)(200 - i))]);
        var keyA = seedA.GetPublicKey();
        var keyB = seedB.GetPublicKey();
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, $"authorization {{ users = [ {{nkey: {keyA}}}, {{nkey: {keyB}}} ] }}\n");
            await using var a = await NkeySessionAsync(server.Port, keyA, seedA);
            await using var b = await NkeySessionAsync(server.Port, keyB, seedB);
            var transcript = new List<string> { "reload: " + (await server.ReloadAsync($"authorization {{ users = [ {{nkey: {keyA}}} ] }}\n") ?? "ok") };
            transcript.AddRange((await b.ReadUntilClosedAsync()).Select(l => "b " + l));
            transcript.AddRange((await a.ExchangeAsync("SUB n 1\r\nPUB n 1\r\nz\r\n")).Select(l => "a " + l));
            return transcript;
        });
        Assert.Equal(["reload: ok", "b [closed]", "a MSG n 1 1", "a z"], results);
    }

    private static async Task<Session> NkeySessionAsync(int port, string key, NATS.NKeys.KeyPair seed)
    {
        // The nonce differs per connection: the CONNECT is signed once the INFO is in.
        return await Session.OpenSignedAsync(port, nonce =>
        {
            var sig = SeededKeyPair.SignNonce(seed, nonce);
            return $"{{\"verbose\":false,\"protocol\":1,\"nkey\":\"{key}\",\"sig\":\"{sig}\"}}";
        });
    }

    [Fact]
    public async Task System_account_only_setup_keeps_credential_less_clients_across_a_reload()
    {
        // Go gives $G a made-up no_auth_user when the only configured account is the system account,
        // and keeps its name across reloads, so such clients survive.
        const string config = "system_account: SYS\naccounts { SYS { users: [ {user: sys, password: ps} ] } }\n";
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, config);
            await using var anonymous = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}");
            var transcript = new List<string>(await anonymous.ExchangeAsync("SUB g 1\r\n"));
            transcript.Add("reload: " + (await server.ReloadAsync(config) ?? "ok"));
            transcript.AddRange(await anonymous.ExchangeAsync("PUB g 2\r\nhi\r\n"));
            return transcript;
        });
        Assert.Equal(["reload: ok", "MSG g 1 2", "hi"], results);
    }

    [Fact]
    public async Task Single_user_clients_are_closed_by_any_reload_as_in_go()
    {
        // Go 2.9.10 looks connected user names up in the users list only, which a lone user/password
        // does not fill, so every reload closes such clients ("Client Closed", no -ERR).
        const string config = "authorization { user: a, password: b }\n";
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, config);
            await using var client = await Session.OpenAsync(server.Port, Login("a", "b"));
            var transcript = new List<string> { "reload: " + (await server.ReloadAsync(config) ?? "ok") };
            transcript.AddRange(await client.ReadUntilClosedAsync());
            return transcript;
        });
        Assert.Equal(["reload: ok", "[closed]"], results);
    }

    [Fact]
    public async Task Refused_change_keeps_the_old_configuration_and_a_good_one_applies_limits()
    {
        var results = await BothAsync(async kind =>
        {
            var transcript = new List<string>();
            await using var server = await OpsServer.StartAsync(kind, "max_payload: 1000\nmax_subscriptions: 10\n");
            await using var live = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"protocol\":1}");
            transcript.AddRange(await live.ExchangeAsync("SUB big 1\r\n"));

            transcript.Add("reload: " + (await server.ReloadAsync("max_payload: 2000\nmax_subscriptions: 20\n") ?? "ok"));
            await using (var probe = await Session.OpenAsync(server.Port))
            {
                transcript.Add("max_payload after refused reload: " + MaxPayload(probe.Info));
            }

            transcript.Add("reload: " + (await server.ReloadAsync("max_payload: 2000\nmax_subscriptions: 10\n") ?? "ok"));
            await using (var probe = await Session.OpenAsync(server.Port))
            {
                transcript.Add("max_payload after reload: " + MaxPayload(probe.Info));
            }
            // The connected client's own limit moved too: 1500 bytes now pass.
            var payload = new string('x', 1500);
            transcript.AddRange((await live.ExchangeAsync($"PUB big 1500\r\n{payload}\r\n")).Select(l => l.Length > 40 ? $"<{l.Length} bytes>" : l));
            return transcript;
        });
        Assert.Equal(
        [
            "reload: config reload not supported for MaxSubs: old=10, new=20",
            "max_payload after refused reload: 1000",
            "reload: ok",
            "max_payload after reload: 2000",
            "MSG big 1 1500", "<1500 bytes>",
        ], results);
    }

    [Fact]
    public async Task Lower_max_connections_closes_the_excess_clients()
    {
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "max_connections: 10\n");
            var sessions = new List<Session>();
            for (var i = 0; i < 3; i++)
            {
                sessions.Add(await Session.OpenAsync(server.Port));
            }
            var transcript = new List<string> { "reload: " + (await server.ReloadAsync("max_connections: 1\n") ?? "ok") };
            var survivors = 0;
            foreach (var session in sessions)
            {
                try
                {
                    await session.ExchangeAsync();
                    survivors++;
                }
                catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException)
                {
                    // Closed by the reload (a reset if our PING raced the close).
                }
            }
            transcript.Add($"survivors: {survivors}");
            foreach (var session in sessions)
            {
                await session.DisposeAsync();
            }
            transcript.Add("log: " + (await server.Log.WaitForAsync("connections to fall within max_connections")).Line.Split("] ").Last());
            return transcript;
        });
        Assert.Equal(["reload: ok", "survivors: 1", "log: Closed 2 connections to fall within max_connections"], results);
    }

    [Fact]
    public async Task Invalid_file_is_refused_with_the_parse_error()
    {
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "max_payload: 1000\n");
            var error = await server.ReloadAsync("max_payload: 1000\nnot_a_key: 1\n");
            // The file path differs per server; keep what follows it.
            return new List<string> { error is null ? "ok" : error[(error.IndexOf(".conf:", StringComparison.Ordinal) + 6)..] };
        });
        Assert.Equal(["2:1: unknown field \"not_a_key\""], results);
    }

    [Fact]
    public async Task Reload_log_lines_match_go()
    {
        var results = await BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, "max_payload: 1000\nping_interval: \"2m\"\nwrite_deadline: \"10s\"\n");
            var from = server.Log.Count;
            Assert.Null(await server.ReloadAsync("max_payload: 2000\nping_interval: \"30s\"\nwrite_deadline: \"3s\"\ndebug: true\nauthorization { timeout: 0.5 }\n"));
            var (_, end) = await server.Log.WaitForAsync("Reloaded server configuration", from);
            var lines = new List<string>();
            for (var i = from; i <= end; i++)
            {
                var line = (await server.Log.WaitForAsync(_ => true, i)).Line;
                if (line.Contains("[INF] Reloaded", StringComparison.Ordinal))
                {
                    lines.Add(line[(line.IndexOf("[INF] ", StringComparison.Ordinal) + 6)..]);
                }
            }
            return lines;
        });
        Assert.Equal(
        [
            "Reloaded: debug = true",
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: ping_interval = 30s",
            "Reloaded: authorization timeout = 0.5",
            "Reloaded: max_payload = 2000",
            "Reloaded: write_deadline = 3s",
            "Reloaded server configuration",
        ], results);
    }

    private static int MaxPayload(string infoLine)
    {
        using var doc = JsonDocument.Parse(infoLine["INFO ".Length..]);
        return doc.RootElement.GetProperty("max_payload").GetInt32();
    }

    /// <summary>Runs the scenario against Go, then ours; asserts equal transcripts and returns one.</summary>
    internal static async Task<List<string>> BothAsync(Func<string, Task<List<string>>> scenario)
    {
        var go = await scenario("go");
        var ours = await scenario("ours");
        Assert.Equal(go, ours);
        return ours;
    }
}
