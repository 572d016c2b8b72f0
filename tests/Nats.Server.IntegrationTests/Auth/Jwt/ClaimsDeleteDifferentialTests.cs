using System.Text.Json;
using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// $SYS.REQ.CLAIMS.DELETE with the full resolver, and account JWT expiry, against Go 2.9.10 and ours,
/// each with a resolver directory of its own: the answers (minus "server"), what connected users see
/// and whether they can log in again must agree.
/// </summary>
public sealed class ClaimsDeleteDifferentialTests : IDisposable
{
    private const string Delete = "$SYS.REQ.CLAIMS.DELETE";
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jwt-delete-").FullName;

    [Fact]
    public async Task Delete_requests_are_answered_as_go_and_a_deleted_account_is_expired()
    {
        var f = new OperatorFixture();
        var (userKey, userJwt) = f.User();
        var accountKey = f.Account.GetPublicKey();
        var stranger = JwtMinter.NewKey(PrefixByte.Operator);
        var requests = new (string Name, string Body)[]
        {
            ("garbage", "garbage"),
            ("not self signed", DeleteRequest(f.Operator, accountKey, [accountKey])),
            ("untrusted operator", DeleteRequest(stranger, stranger.GetPublicKey(), [accountKey])),
            ("no accounts", DeleteRequest(f.Operator, f.Operator.GetPublicKey(), null)),
            ("user key listed", DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [userKey.GetPublicKey()])),
            ("system account listed", DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [accountKey, f.System.GetPublicKey()])),
            ("bad signature", Tamper(DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [accountKey]))),
        };
        var unknown = JwtMinter.NewKey(PrefixByte.Account).GetPublicKey();
        var delete = DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [accountKey, unknown]);

        var results = new List<Result>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir, allowDelete: true));
            await using var sys = await SystemUserAsync(f, server, dir);
            var user = JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "PING\r\n", until: "[never]");
            var result = new Result();
            foreach (var (_, body) in requests)
            {
                result.Refusals.Add(await RequestAsync(sys, Delete, body));
            }
            await WaitForConnectionsAsync(sys, 2);
            result.Delete = await RequestAsync(sys, Delete, delete);
            result.User = await user.WaitAsync(TimeSpan.FromSeconds(30));
            result.Again = await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "");
            result.List = await RequestAsync(sys, "$SYS.REQ.CLAIMS.LIST", "");
            result.Renamed = File.Exists(Path.Combine(dir, accountKey + ".jwt.deleted")) && !File.Exists(Path.Combine(dir, accountKey + ".jwt"));
            results.Add(result);
        }
        var (go, ours) = (results[0], results[1]);
        for (var i = 0; i < requests.Length; i++)
        {
            Assert.Contains("\"error\"", go.Refusals[i], StringComparison.Ordinal);
            Assert.True(go.Refusals[i] == ours.Refusals[i], $"{requests[i].Name}: go {go.Refusals[i]}, ours {ours.Refusals[i]}");
        }
        Assert.Equal("{\"data\":{\"code\":200,\"message\":\"deleted 2 accounts\"}}", go.Delete);
        Assert.Equal(go.Delete, ours.Delete);
        Assert.Equal(["+OK", "PONG", "-ERR 'Account Authentication Expired'", "[closed]"], go.User);
        Assert.Equal(go.User, ours.User);
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], go.Again);
        Assert.Equal(go.Again, ours.Again);
        Assert.Equal(go.List, ours.List);
        Assert.True(go.Renamed);
        Assert.True(ours.Renamed);
    }

    [Fact]
    public async Task Delete_without_allow_delete_is_refused_as_go_and_changes_nothing()
    {
        var f = new OperatorFixture();
        var (userKey, userJwt) = f.User();
        var delete = DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [f.Account.GetPublicKey()]);
        var answers = new List<string>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir));
            await using var sys = await SystemUserAsync(f, server, dir);
            answers.Add(await RequestAsync(sys, Delete, delete));
            Assert.Equal(["+OK", "PONG"], await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), ""));
        }
        Assert.Equal("{\"error\":{\"code\":500,\"description\":\"delete accounts request by " + f.Operator.GetPublicKey() + " failed - delete must be enabled in server config\"}}", answers[0]);
        Assert.Equal(answers[0], answers[1]);
    }

    [Fact]
    public async Task Account_jwt_expiring_closes_its_users_and_refuses_logins_as_go()
    {
        var f = new OperatorFixture();
        var (userKey, userJwt) = f.User();
        var accountKey = f.Account.GetPublicKey();
        var results = new List<(List<string> User, List<string> Again)>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir));
            await using var sys = await SystemUserAsync(f, server, dir);
            var user = JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "PING\r\n", until: "[never]");
            await WaitForConnectionsAsync(sys, 2);
            // Minted now, so each server gets the same few seconds; issued later than the preloaded JWT so it is newer.
            var expiring = JwtMinter.Account(f.Operator, accountKey, top: t =>
            {
                t["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 1;
                t["exp"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 3;
            });
            Assert.Contains("jwt updated", await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{accountKey}.CLAIMS.UPDATE", expiring), StringComparison.Ordinal);
            var lines = await user.WaitAsync(TimeSpan.FromSeconds(30));
            var again = await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "");
            results.Add((lines, again));
        }
        Assert.Equal(["+OK", "PONG", "-ERR 'Account Authentication Expired'", "[closed]"], results[0].User);
        Assert.Equal(results[0].User, results[1].User);
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], results[0].Again);
        Assert.Equal(results[0].Again, results[1].Again);
    }

    [Fact]
    public async Task A_deleted_account_leaves_jetstream_and_an_update_brings_its_streams_back_as_go()
    {
        var f = new OperatorFixture(EnableJetStream);
        var (userKey, userJwt) = f.User();
        var accountKey = f.Account.GetPublicKey();
        var results = new List<List<string>>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            var settings = f.FullResolverSettings(Path.Combine(dir, "jwt"), allowDelete: true);
            settings.JetStream = true;
            settings.StoreDir = Path.Combine(dir, "js");
            await using var server = await start(settings);
            await using var sys = await SystemUserAsync(f, server, dir);
            var creds = Path.Combine(dir, "user.creds");
            await File.WriteAllTextAsync(creds, JwtMinter.Creds(userJwt, userKey));
            var result = new List<string>();
            await using (var user = await ConnectAsync(server, creds))
            {
                var js = new NatsJSContext(user);
                await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
                for (var i = 0; i < 3; i++)
                {
                    await js.PublishAsync($"orders.{i}", "order");
                }
            }
            result.Add("before: " + await JszAsync(sys));
            result.Add(await RequestAsync(sys, Delete, DeleteRequest(f.Operator, f.Operator.GetPublicKey(), [accountKey])));
            result.Add("deleted: " + await JszAsync(sys));
            // Pushed again (a later issue time), the account is back with its stream recovered from disk.
            var again = JwtMinter.Account(f.Operator, accountKey, EnableJetStream, t => t["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 1);
            result.Add(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", again));
            await using (var user = await ConnectAsync(server, creds))
            {
                var stream = await new NatsJSContext(user).GetStreamAsync("ORDERS");
                result.Add($"restored: {stream.Info.State.Messages} messages");
            }
            result.Add("updated: " + await JszAsync(sys));
            results.Add(result);
        }
        Assert.Equal("before: accounts 1, streams 1, messages 3", results[0][0]);
        Assert.Equal(results[0], results[1]);
    }

    private static void EnableJetStream(JsonObject nats)
    {
        nats["limits"]!["mem_storage"] = -1;
        nats["limits"]!["disk_storage"] = -1;
    }

    private static async Task<NatsConnection> ConnectAsync(ITestServer server, string creds)
    {
        var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", AuthOpts = new NatsAuthOpts { CredsFile = creds }, MaxReconnectRetry = 0 });
        await nats.ConnectAsync();
        return nats;
    }

    /// <summary>What Go's JSZ counts over the accounts with JetStream.</summary>
    private static async Task<string> JszAsync(NatsConnection sys)
    {
        var reply = await sys.RequestAsync<string, string>("$SYS.REQ.SERVER.PING.JSZ", "", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        var data = JsonNode.Parse(reply.Data!)!["data"]!;
        return $"accounts {data["accounts"]}, streams {data["streams"]}, messages {data["messages"]}";
    }

    /// <summary>A delete request as nsc builds it: generic claims whose "nats" object lists the accounts.</summary>
    private static string DeleteRequest(KeyPair signer, string subject, string[]? accounts)
    {
        var nats = new JsonObject();
        if (accounts is not null)
        {
            nats["accounts"] = new JsonArray([.. accounts.Select(a => JsonValue.Create(a))]);
        }
        var claims = new JsonObject
        {
            ["jti"] = Guid.NewGuid().ToString("N").ToUpperInvariant(),
            ["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds(),
            ["iss"] = signer.GetPublicKey(),
            ["sub"] = subject,
            ["nats"] = nats,
        };
        return JwtMinter.Sign(signer, JwtMinter.Header, claims.ToJsonString());
    }

    /// <summary>The same token with the signature of another payload.</summary>
    private static string Tamper(string jwt)
    {
        var parts = jwt.Split('.');
        return parts[0] + "." + JwtMinter.B64(System.Text.Encoding.UTF8.GetBytes("{\"iss\":\"x\"}"))[..4] + parts[1][4..] + "." + parts[2];
    }

    private static IEnumerable<(string Name, Func<ServerSettings, Task<ITestServer>> Start)> Servers()
    {
        yield return ("go", TestServers.StartGoAsync);
        yield return ("ours", TestServers.StartOursAsync);
    }

    private static async Task<NatsConnection> SystemUserAsync(OperatorFixture f, ITestServer server, string dir)
    {
        var (sysKey, sysJwt) = f.User(signer: f.System);
        var creds = Path.Combine(dir, "sys.creds");
        await File.WriteAllTextAsync(creds, JwtMinter.Creds(sysJwt, sysKey));
        var sys = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", AuthOpts = new NatsAuthOpts { CredsFile = creds } });
        await sys.ConnectAsync();
        return sys;
    }

    /// <summary>The reply without Go's "server" object, as canonical JSON; a non-JSON reply as a quoted string.</summary>
    private static async Task<string> RequestAsync(NatsConnection nats, string subject, string body)
    {
        var reply = await nats.RequestAsync<string, string>(subject, body, replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        var text = reply.Data ?? "";
        try
        {
            var node = JsonNode.Parse(text)!.AsObject();
            node.Remove("server");
            if (node["data"] is JsonArray list)
            {
                node["data"] = new JsonArray([.. list.Select(i => JsonValue.Create(i!.GetValue<string>())).OrderBy(v => v!.GetValue<string>(), StringComparer.Ordinal)]);
            }
            return node.ToJsonString();
        }
        catch (JsonException)
        {
            return JsonSerializer.Serialize(text);
        }
    }

    private static async Task WaitForConnectionsAsync(NatsConnection sys, int count)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var reply = await sys.RequestAsync<string, string>("$SYS.REQ.SERVER.PING.CONNZ", "", cancellationToken: cts.Token);
            if (JsonNode.Parse(reply.Data!)!["data"]!["num_connections"]!.GetValue<int>() >= count)
            {
                return;
            }
            await Task.Delay(50, cts.Token);
        }
    }

    private sealed class Result
    {
        public List<string> Refusals = [];
        public string Delete = "";
        public List<string> User = [];
        public List<string> Again = [];
        public string List = "";
        public bool Renamed;
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
