using System.Text.Json;
using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// The full resolver's claim requests from a system-account user, against Go 2.9.10 and ours, each
/// with a resolver directory of its own: the answers (minus the "server" object) and what happens to
/// connected users must agree.
/// </summary>
public sealed class ClaimsUpdateDifferentialTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jwt-").FullName;

    [Fact]
    public async Task Update_revoking_a_connected_user_closes_it_and_bad_updates_are_refused()
    {
        var f = new OperatorFixture();
        var (userKey, userJwt) = f.User();
        var userSubject = JwtDecoderFacade.Subject(userJwt);
        var accountKey = f.Account.GetPublicKey();
        var revoking = JwtMinter.Account(f.Operator, accountKey, a => a["revocations"] = new JsonObject { [userSubject] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 60 },
            t => t["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 1);
        var wrongOperator = JwtMinter.Account(JwtMinter.NewKey(PrefixByte.Operator), accountKey);
        var otherAccount = JwtMinter.Account(f.Operator, JwtMinter.NewKey(PrefixByte.Account).GetPublicKey());

        var results = new List<Result>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir));
            var (sysKey, sysJwt) = f.User(signer: f.System);
            var creds = Path.Combine(dir, "sys.creds");
            await File.WriteAllTextAsync(creds, JwtMinter.Creds(sysJwt, sysKey));
            await using var sys = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", AuthOpts = new NatsAuthOpts { CredsFile = creds } });
            await sys.ConnectAsync();

            var user = JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "PING\r\n", until: "[never]");
            var result = new Result();
            result.Malformed = await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{accountKey}.CLAIMS.UPDATE", "garbage");
            result.WrongSubject = await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{accountKey}.CLAIMS.UPDATE", otherAccount);
            result.WrongOperator = await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", wrongOperator);
            // The user is known to be in before the revocation goes out.
            await WaitForConnectionAsync(sys, server);
            result.Revoke = await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{accountKey}.CLAIMS.UPDATE", revoking);
            result.User = await user.WaitAsync(TimeSpan.FromSeconds(30));
            result.Lookup = await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{accountKey}.CLAIMS.LOOKUP", "") == Quote(revoking);
            result.List = await RequestAsync(sys, "$SYS.REQ.CLAIMS.LIST", "");
            results.Add(result);
        }
        var (go, ours) = (results[0], results[1]);
        Assert.Equal(["+OK", "PONG", "-ERR 'User Authentication Revoked'", "[closed]"], go.User);
        Assert.Equal(go.User, ours.User);
        Assert.Equal(go.Malformed, ours.Malformed);
        Assert.Equal(go.WrongSubject, ours.WrongSubject);
        // Go stores an update signed by an untrusted operator and says so, but never applies it.
        Assert.Equal(go.WrongOperator, ours.WrongOperator);
        Assert.Equal(go.Revoke, ours.Revoke);
        Assert.Contains("jwt updated", go.Revoke, StringComparison.Ordinal);
        Assert.True(go.Lookup);
        Assert.True(ours.Lookup);
        Assert.Equal(go.List, ours.List);
    }

    private static IEnumerable<(string Name, Func<ServerSettings, Task<ITestServer>> Start)> Servers()
    {
        yield return ("go", TestServers.StartGoAsync);
        yield return ("ours", TestServers.StartOursAsync);
    }

    /// <summary>The reply without Go's "server" object (ids, times), as canonical JSON; a non-JSON reply as a quoted string.</summary>
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
            return Quote(text);
        }
    }

    private static string Quote(string text) => JsonSerializer.Serialize(text);

    /// <summary>Waits until the server counts two client connections (the system user and the test user).</summary>
    private static async Task WaitForConnectionAsync(NatsConnection sys, ITestServer server)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var reply = await sys.RequestAsync<string, string>("$SYS.REQ.SERVER.PING.CONNZ", "", cancellationToken: cts.Token);
            if (JsonNode.Parse(reply.Data!)!["data"]!["num_connections"]!.GetValue<int>() >= 2)
            {
                return;
            }
            await Task.Delay(50, cts.Token);
        }
    }

    private sealed class Result
    {
        public string Malformed = "";
        public string WrongSubject = "";
        public string WrongOperator = "";
        public string Revoke = "";
        public List<string> User = [];
        public bool Lookup;
        public string List = "";
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
