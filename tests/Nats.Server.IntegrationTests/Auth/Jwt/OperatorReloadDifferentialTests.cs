using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Operations;
using Nats.Server.Tests.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// Configuration reload in operator mode, Go 2.9.10 (file rewritten, SIGHUP) against ours (file rewritten,
/// ReloadAsync): which operator-mode changes are refused and with what text, and what a MEMORY resolver
/// re-applies from resolver_preload to the accounts and users already there.
/// </summary>
public sealed partial class OperatorReloadDifferentialTests
{
    private static string Config(OperatorFixture f, string? operatorJwt = null, string resolver = "resolver: MEMORY", IEnumerable<KeyValuePair<string, string>>? preload = null, string extra = "")
    {
        var lines = new List<string> { $"operator: \"{operatorJwt ?? f.OperatorJwt}\"", resolver };
        var accounts = (preload ?? f.Accounts).ToList();
        if (accounts.Count > 0)
        {
            lines.Add("resolver_preload: {");
            lines.AddRange(accounts.Select(a => $"  {a.Key}: \"{a.Value}\""));
            lines.Add("}");
        }
        lines.Add(extra);
        return string.Join('\n', lines) + "\n";
    }

    [Fact]
    public async Task Operator_system_account_and_resolver_changes_are_refused_as_in_go()
    {
        var f = new OperatorFixture();
        // Another operator naming the same system account, so that the operator is the first difference.
        var otherOperator = JwtMinter.Operator(JwtMinter.NewKey(PrefixByte.Operator), n => n["system_account"] = f.System.GetPublicKey());
        var dir = Directory.CreateTempSubdirectory("nats-opreload-").FullName;
        try
        {
            var results = await ReloadDifferentialTests.BothAsync(async kind =>
            {
                await using var server = await OpsServer.StartAsync(kind, Config(f));
                var (userKey, userJwt) = f.User();
                await using var user = await Session.OpenSignedAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce).Replace("\"verbose\":true", "\"verbose\":false", StringComparison.Ordinal));
                var transcript = new List<string>
                {
                    "same: " + await ReloadAsync(server, Config(f)),
                    "operator: " + await ReloadAsync(server, Config(f, otherOperator)),
                    "system_account: " + await ReloadAsync(server, Config(f, extra: $"system_account: {f.Account.GetPublicKey()}")),
                    "no resolver: " + await ReloadAsync(server, Config(f, resolver: "", preload: [])),
                    "full resolver: " + await ReloadAsync(server, Config(f, resolver: $"resolver: {{ type: full, dir: \"{Path.Combine(dir, kind)}\" }}")),
                };
                // A refused reload leaves the user connected and working.
                transcript.AddRange(await user.ExchangeAsync("SUB a 1\r\nPUB a 1\r\nx\r\n"));
                return transcript;
            });
            Assert.Equal(
            [
                "same: ok",
                "operator: config reload not supported for TrustedOperators: old=[{",
                $"system_account: config reload not supported for SystemAccount: old={f.System.GetPublicKey()}, new={f.Account.GetPublicKey()}",
                // Go 2.9.10 refuses only a resolver coming or going; a lone operator always brings a URL resolver.
                "no resolver: ok",
                "full resolver: ok",
                "MSG a 1 1", "x",
            ], results);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task Trusted_keys_change_is_refused_as_in_go()
    {
        var f = new OperatorFixture();
        var keyA = JwtMinter.NewKey(PrefixByte.Operator).GetPublicKey();
        var keyB = JwtMinter.NewKey(PrefixByte.Operator).GetPublicKey();
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            string Keys(params string[] keys) => $"trusted_keys: [{string.Join(", ", keys)}]\nresolver: MEMORY\n";
            await using var server = await OpsServer.StartAsync(kind, Keys(keyA, keyB));
            return
            [
                "same: " + await ReloadAsync(server, Keys(keyA, keyB)),
                "reordered: " + await ReloadAsync(server, Keys(keyB, keyA)),
                "changed: " + await ReloadAsync(server, Keys(keyA)),
            ];
        });
        var sorted = new[] { keyA, keyB }.Order(StringComparer.Ordinal).ToArray();
        Assert.Equal(["same: ok", "reordered: ok", $"changed: config reload not supported for TrustedKeys: old=[{sorted[0]} {sorted[1]}], new=[{keyA}]"], results);
    }

    [Fact]
    public async Task Memory_resolver_reapplies_preloads_and_drops_removed_accounts()
    {
        var f = new OperatorFixture();
        var second = JwtMinter.NewKey(PrefixByte.Account);
        var third = JwtMinter.NewKey(PrefixByte.Account);
        f.Accounts[second.GetPublicKey()] = JwtMinter.Account(f.Operator, second.GetPublicKey());
        var (revokedKey, revokedJwt) = f.User();
        var (keptKey, keptJwt) = f.User();
        var secondUserKey = JwtMinter.NewKey(PrefixByte.User);
        var secondUserJwt = JwtMinter.User(second, secondUserKey.GetPublicKey());
        var thirdUserKey = JwtMinter.NewKey(PrefixByte.User);
        var thirdUserJwt = JwtMinter.User(third, thirdUserKey.GetPublicKey());
        var revokedSubject = JwtDecoderFacade.Subject(revokedJwt);

        // The application account revokes one user and lowers its payload limit; the second account goes; a third comes.
        var changed = new Dictionary<string, string>
        {
            [f.System.GetPublicKey()] = f.Accounts[f.System.GetPublicKey()],
            [f.Account.GetPublicKey()] = JwtMinter.Account(f.Operator, f.Account.GetPublicKey(), a =>
            {
                a["revocations"] = new JsonObject { [revokedSubject] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 60 };
                a["limits"]!["payload"] = 4;
            }, t => t["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 1),
            [third.GetPublicKey()] = JwtMinter.Account(f.Operator, third.GetPublicKey()),
        };
        var results = await ReloadDifferentialTests.BothAsync(async kind =>
        {
            await using var server = await OpsServer.StartAsync(kind, Config(f));
            await using var revoked = await OpenAsync(server.Port, revokedJwt, revokedKey);
            await using var kept = await OpenAsync(server.Port, keptJwt, keptKey);
            await using var secondUser = await OpenAsync(server.Port, secondUserJwt, secondUserKey);
            var transcript = new List<string>();
            transcript.AddRange((await kept.ExchangeAsync("SUB p 1\r\n")).Select(l => "kept " + l));
            var from = server.Log.Count;
            transcript.Add("reload: " + await ReloadAsync(server, Config(f, preload: changed)));
            transcript.AddRange(await ReloadLinesAsync(server, from));
            transcript.AddRange((await revoked.ReadUntilClosedAsync()).Select(l => "revoked " + l));
            transcript.AddRange((await secondUser.ReadUntilClosedAsync()).Select(l => "second " + l));
            transcript.AddRange((await kept.ExchangeAsync("PUB p 3\r\nabc\r\n")).Select(l => "kept " + l));
            await using var thirdUser = await OpenAsync(server.Port, thirdUserJwt, thirdUserKey);
            transcript.AddRange((await thirdUser.ExchangeAsync("SUB t 1\r\nPUB t 1\r\nz\r\n")).Select(l => "third " + l));
            // The payload limit the new JWT set closes the kept user at its next larger message.
            await kept.SendAsync("PUB p 5\r\nabcde\r\n");
            transcript.AddRange((await kept.ReadUntilClosedAsync()).Select(l => "kept " + l));
            return transcript.Select(l => l.Replace(second.GetPublicKey(), "SECOND", StringComparison.Ordinal)).ToList();
        });
        Assert.Equal(
        [
            "reload: ok",
            "log [INF] Reloaded: authorization users",
            "log [INF] Reloaded: accounts",
            "log [INF] Reloaded: accounts",
            "log [WRN] Account fetch failed: account missing",
            "log [INF] Reloaded: deleting account [removed]: \"SECOND\"",
            "log [WRN] Account fetch failed: account missing",
            "log [ERR] CLIENT - authentication error",
            "log [INF] Reloaded server configuration",
            "revoked -ERR 'User Authentication Revoked'", "revoked [closed]",
            "second -ERR 'Authorization Violation'", "second [closed]",
            "kept MSG p 1 3", "kept abc",
            "third MSG t 1 1", "third z",
            "kept -ERR 'Maximum Payload Violation'", "kept [closed]",
        ], results);
    }

    private static Task<Session> OpenAsync(int port, string jwt, KeyPair key) =>
        Session.OpenSignedAsync(port, nonce => OperatorFixture.Connect(jwt, key, nonce).Replace("\"verbose\":true", "\"verbose\":false", StringComparison.Ordinal));

    /// <summary>The reload's outcome; of an error only its first line (Go logs the indented operator JWTs on the next ones).</summary>
    private static async Task<string> ReloadAsync(OpsServer server, string config) =>
        (await server.ReloadAsync(config) ?? "ok").Split('\n')[0].TrimEnd();

    /// <summary>The notice lines of one reload, up to "Reloaded server configuration", without the time stamp and pid.</summary>
    private static async Task<List<string>> ReloadLinesAsync(OpsServer server, int from)
    {
        var (_, end) = await server.Log.WaitForAsync("Reloaded server configuration", from);
        var lines = new List<string>();
        for (var i = from; i <= end; i++)
        {
            var line = (await server.Log.WaitForAsync(_ => true, i)).Line;
            if (Level().Match(line) is { Success: true } match)
            {
                lines.Add("log " + Client().Replace(line[match.Index..], "CLIENT"));
            }
        }
        return lines;
    }

    [GeneratedRegex(@"\[(INF|WRN|ERR)\] ")]
    private static partial Regex Level();

    [GeneratedRegex(@"127\.0\.0\.1:\d+ - cid:\d+")]
    private static partial Regex Client();

}
