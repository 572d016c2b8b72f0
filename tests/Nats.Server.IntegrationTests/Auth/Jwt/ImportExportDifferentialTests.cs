using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// Exports and imports from account JWTs (public, token-required with activation tokens from the
/// account and from its signing key, an expired activation), then an exporter update that drops a
/// stream export and revokes an activation: NATS.Net clients in both accounts, Go 2.9.10 and ours
/// with the same keys must give the same answers.
/// </summary>
public sealed class ImportExportDifferentialTests : IDisposable
{
    private static readonly string[] Services = ["svc.public", "b.svc", "svc.private", "svc.sk", "svc.expired", "svc.forged", "svc.none"];

    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jwt-ie-").FullName;

    [Fact]
    public async Task Service_and_stream_imports_follow_exports_activations_and_updates_as_go()
    {
        var signingKey = JwtMinter.NewKey(PrefixByte.Account);
        var f = new OperatorFixture(ExporterClaims(signingKey.GetPublicKey(), revokeFor: [], 0, dropFeed: false));
        var importer = JwtMinter.NewKey(PrefixByte.Account);
        var b = importer.GetPublicKey();
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var a = f.Account.GetPublicKey();
        var complete = JwtMinter.NewKey(PrefixByte.Account);
        var c = complete.GetPublicKey();
        JsonObject Import(string subject, string type, string? token = null, string? local = null)
        {
            var import = new JsonObject { ["subject"] = subject, ["account"] = a, ["type"] = type };
            if (token is not null)
            {
                import["token"] = token;
            }
            if (local is not null)
            {
                import["local_subject"] = local;
            }
            return import;
        }
        f.Accounts[b] = JwtMinter.Account(f.Operator, b, n => n["imports"] = new JsonArray(
            Import("svc.public", "service"),
            Import("svc.public", "service", local: "b.svc"),
            Import("svc.private", "service", JwtMinter.Activation(f.Account, b, "svc.private", "service")),
            Import("svc.sk", "service", JwtMinter.Activation(signingKey, b, "svc.sk", "service", n => n["issuer_account"] = a)),
            Import("svc.expired", "service", JwtMinter.Encode(f.Account, b, "activation", n =>
            {
                n["subject"] = "svc.expired";
                n["kind"] = "service";
            }, t => t["exp"] = now - 10)),
            Import("svc.forged", "service", JwtMinter.Activation(JwtMinter.NewKey(PrefixByte.Account), b, "svc.forged", "service", n => n["issuer_account"] = a)),
            Import("feed.public", "stream"),
            Import("feed.private", "stream", JwtMinter.Activation(f.Account, b, "feed.private", "stream"))));
        // C's imports all resolve: an exporter update turns them invalid in place rather than resolving C again.
        f.Accounts[c] = JwtMinter.Account(f.Operator, c, n => n["imports"] = new JsonArray(
            Import("svc.public", "service"),
            Import("svc.private", "service", JwtMinter.Activation(f.Account, c, "svc.private", "service")),
            Import("feed.public", "stream"),
            Import("feed.private", "stream", JwtMinter.Activation(f.Account, c, "feed.private", "stream"))));
        var updated = JwtMinter.Account(f.Operator, a, ExporterClaims(signingKey.GetPublicKey(), revokeFor: [b, c], now + 60, dropFeed: true), t => t["iat"] = now + 1);

        var results = new List<List<string>>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir));
            var url = $"nats://127.0.0.1:{server.Port}";
            await using var sys = await ConnectAsync(url, dir, "sys", f.User(signer: f.System));
            await using var inA = await ConnectAsync(url, dir, "a", f.User());
            var bKey = JwtMinter.NewKey(PrefixByte.User);
            await using var inB = await ConnectAsync(url, dir, "b", (bKey, JwtMinter.User(importer, bKey.GetPublicKey())));
            var cKey = JwtMinter.NewKey(PrefixByte.User);
            await using var inC = await ConnectAsync(url, dir, "c", (cKey, JwtMinter.User(complete, cKey.GetPublicKey())));

            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            var responder = RespondAsync(inA, cts.Token);
            await using var feedB = await inB.SubscribeCoreAsync<string>("feed.>", cancellationToken: cts.Token);
            await using var feedC = await inC.SubscribeCoreAsync<string>("feed.>", cancellationToken: cts.Token);
            await inA.PingAsync(cts.Token);
            await inB.PingAsync(cts.Token);
            await inC.PingAsync(cts.Token);

            var result = new List<string>();
            await RoundAsync(inA, [("b", inB, feedB), ("c", inC, feedC)], result, "before", cts.Token);
            var reply = await sys.RequestAsync<string, string>("$SYS.REQ.CLAIMS.UPDATE", updated, cancellationToken: cts.Token);
            result.Add("update: " + JsonNode.Parse(reply.Data!)!["data"]?["message"]);
            await RoundAsync(inA, [("b", inB, feedB), ("c", inC, feedC)], result, "after", cts.Token);
            results.Add(result);
            await cts.CancelAsync();
            await responder.ContinueWith(_ => { }, TaskScheduler.Default);
        }
        Assert.Equal(results[0], results[1]);
        Assert.Contains("before b svc.public: A got svc.public", results[0]);
        // B had imports that failed, so Go resolves it again (the import is gone); C's stays, invalid.
        Assert.Contains("after b svc.private: no responders", results[0]);
        Assert.Contains("after c svc.private: timeout", results[0]);
    }

    /// <summary>The exporter: public and token-required services and streams, one signing key.</summary>
    private static Action<JsonObject> ExporterClaims(string signingKey, string[] revokeFor, long revokedAt, bool dropFeed) => n =>
    {
        JsonObject Export(string subject, string type, bool token)
        {
            var export = new JsonObject { ["subject"] = subject, ["type"] = type };
            if (token)
            {
                export["token_req"] = true;
            }
            return export;
        }
        var privateService = Export("svc.private", "service", true);
        if (revokeFor.Length > 0)
        {
            privateService["revocations"] = new JsonObject(revokeFor.Select(k => KeyValuePair.Create(k, (JsonNode?)revokedAt)));
        }
        var exports = new JsonArray(
            Export("svc.public", "service", false),
            privateService,
            Export("svc.sk", "service", true),
            Export("svc.expired", "service", true),
            Export("svc.forged", "service", true),
            Export("feed.private", "stream", true));
        if (!dropFeed)
        {
            exports.Add(Export("feed.public", "stream", false));
        }
        n["exports"] = exports;
        n["signing_keys"] = new JsonArray(signingKey);
    };

    /// <summary>Requests from each importer on every service, then A publishes on both feeds (the private one last, as the end mark).</summary>
    private static async Task RoundAsync(NatsConnection inA, (string Name, NatsConnection Nats, INatsSub<string> Feed)[] importers, List<string> result, string label, CancellationToken cancel)
    {
        foreach (var (name, nats, _) in importers)
        {
            foreach (var subject in Services)
            {
                string outcome;
                try
                {
                    var reply = await nats.RequestAsync<string, string>(subject, "q", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(3) }, cancellationToken: cancel);
                    outcome = reply.Data ?? "";
                }
                catch (NatsNoRespondersException)
                {
                    outcome = "no responders";
                }
                catch (NatsNoReplyException)
                {
                    outcome = "timeout";
                }
                result.Add($"{label} {name} {subject}: {outcome}");
            }
        }
        await inA.PublishAsync("feed.public", label, cancellationToken: cancel);
        await inA.PublishAsync("feed.private", label, cancellationToken: cancel);
        foreach (var (name, _, feed) in importers)
        {
            while (true)
            {
                var msg = await feed.Msgs.ReadAsync(cancel);
                result.Add($"{label} {name} feed: {msg.Subject} {msg.Data}");
                if (msg.Subject == "feed.private")
                {
                    break;
                }
            }
        }
    }

    private static async Task RespondAsync(NatsConnection inA, CancellationToken cancel)
    {
        await foreach (var msg in inA.SubscribeAsync<string>("svc.>", cancellationToken: cancel))
        {
            await msg.ReplyAsync("A got " + msg.Subject, cancellationToken: cancel);
        }
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string dir, string name, (KeyPair Key, string Jwt) user)
    {
        var creds = Path.Combine(dir, name + ".creds");
        await File.WriteAllTextAsync(creds, JwtMinter.Creds(user.Jwt, user.Key));
        var nats = new NatsConnection(new NatsOpts { Url = url, Name = name, AuthOpts = new NatsAuthOpts { CredsFile = creds } });
        await nats.ConnectAsync();
        return nats;
    }

    private static IEnumerable<(string Name, Func<ServerSettings, Task<ITestServer>> Start)> Servers()
    {
        yield return ("go", TestServers.StartGoAsync);
        yield return ("ours", TestServers.StartOursAsync);
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
