using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// Activation tokens that expire while imported (Go's activation expiry timer): the importer's service
/// and stream imports stop carrying anything once the token's exp passes. Go 2.9.10 and ours, NATS.Net
/// clients in both accounts, the same keys.
/// </summary>
public sealed class ActivationExpiryDifferentialTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jwt-act-").FullName;

    [Fact]
    public async Task Imports_stop_when_their_activation_expires_as_go()
    {
        var f = new OperatorFixture(n => n["exports"] = new JsonArray(
            new JsonObject { ["subject"] = "svc.private", ["type"] = "service", ["token_req"] = true },
            new JsonObject { ["subject"] = "feed.private", ["type"] = "stream", ["token_req"] = true },
            new JsonObject { ["subject"] = "feed.public", ["type"] = "stream" }));
        var importer = JwtMinter.NewKey(PrefixByte.Account);
        var c = importer.GetPublicKey();
        var a = f.Account.GetPublicKey();
        string Importer(long? expires, long issuedAt) => JwtMinter.Account(f.Operator, c, n => n["imports"] = new JsonArray(
            new JsonObject { ["subject"] = "svc.private", ["account"] = a, ["type"] = "service", ["token"] = Activation("svc.private", "service", expires) },
            new JsonObject { ["subject"] = "feed.private", ["account"] = a, ["type"] = "stream", ["token"] = Activation("feed.private", "stream", expires) },
            new JsonObject { ["subject"] = "feed.public", ["account"] = a, ["type"] = "stream" }), t => t["iat"] = issuedAt);
        string Activation(string subject, string kind, long? expires) => JwtMinter.Encode(f.Account, c, "activation", n =>
        {
            n["subject"] = subject;
            n["kind"] = kind;
        }, t =>
        {
            if (expires is { } e)
            {
                t["exp"] = e;
            }
        });
        f.Accounts[c] = Importer(null, DateTimeOffset.UtcNow.ToUnixTimeSeconds());

        var results = new List<List<string>>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            await using var server = await start(f.FullResolverSettings(dir));
            var url = $"nats://127.0.0.1:{server.Port}";
            await using var sys = await ConnectAsync(url, dir, "sys", f.User(signer: f.System));
            await using var inA = await ConnectAsync(url, dir, "a", f.User());
            var cKey = JwtMinter.NewKey(PrefixByte.User);
            await using var inC = await ConnectAsync(url, dir, "c", (cKey, JwtMinter.User(importer, cKey.GetPublicKey())));
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            var responder = RespondAsync(inA, cts.Token);
            await using var feed = await inC.SubscribeCoreAsync<string>("feed.>", cancellationToken: cts.Token);
            await inA.PingAsync(cts.Token);
            await inC.PingAsync(cts.Token);

            // Minted now, so each server gets the same few seconds before the activations expire.
            var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            var expires = now + 4;
            var reply = await sys.RequestAsync<string, string>($"$SYS.REQ.ACCOUNT.{c}.CLAIMS.UPDATE", Importer(expires, now + 1), cancellationToken: cts.Token);
            var result = new List<string> { "update: " + JsonNode.Parse(reply.Data!)!["data"]?["message"] };
            await RoundAsync(inA, inC, feed, result, "before", cts.Token);
            // Past the second the activations name, with a margin for Go's timer and our heartbeat.
            while (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() < (expires + 1) * 1000 + 500)
            {
                await Task.Delay(100, cts.Token);
            }
            await RoundAsync(inA, inC, feed, result, "after", cts.Token);
            results.Add(result);
            await cts.CancelAsync();
            await responder.ContinueWith(_ => { }, TaskScheduler.Default);
        }
        Assert.Equal(
        [
            "update: jwt updated",
            "before svc.private: A got svc.private",
            "before feed: feed.private before",
            "before feed: feed.public before",
            "after svc.private: timeout",
            "after feed: feed.public after",
        ], results[0]);
        Assert.Equal(results[0], results[1]);
    }

    /// <summary>A request on the private service, then A publishes the private feed and the public one (the end mark).</summary>
    private static async Task RoundAsync(NatsConnection inA, NatsConnection inC, INatsSub<string> feed, List<string> result, string label, CancellationToken cancel)
    {
        string outcome;
        try
        {
            var reply = await inC.RequestAsync<string, string>("svc.private", "q", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2) }, cancellationToken: cancel);
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
        result.Add($"{label} svc.private: {outcome}");
        await inA.PublishAsync("feed.private", label, cancellationToken: cancel);
        await inA.PublishAsync("feed.public", label, cancellationToken: cancel);
        while (true)
        {
            var msg = await feed.Msgs.ReadAsync(cancel);
            result.Add($"{label} feed: {msg.Subject} {msg.Data}");
            if (msg.Subject == "feed.public")
            {
                break;
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
