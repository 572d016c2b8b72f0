using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Clients;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JsClient;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// The four client libraries the issue names log in with nsc-style creds files against Go 2.9.10 and
/// ours with the same operator, account and users: a round trip, a publish the user's JWT permissions
/// refuse, and a revoked user's login refused. Each client prints the same normalized transcript
/// (tests/go/credsclient, tests/js/creds.mjs, tests/c/credsclient.c; NATS.Net here).
/// </summary>
public sealed partial class CredsClientInteropTests : IDisposable
{
    private static readonly TimeSpan ClientTimeout = TimeSpan.FromSeconds(120);
    private static readonly string[] Expected =
    [
        "connected",
        "received greet.a hello",
        "violation publish secret.x",
        "revoked Authorization Violation",
    ];

    private readonly string _dir = Directory.CreateTempSubdirectory("nats-creds-interop-").FullName;

    public static TheoryData<string> Clients() => new("natsnet", "nats.go", "nats.js", "nats.c");

    [Theory]
    [MemberData(nameof(Clients))]
    public async Task Client_with_creds_file_behaves_the_same_on_go_and_ours(string client)
    {
        var revokedKey = JwtMinter.NewKey(PrefixByte.User);
        // Revokes every JWT of that key issued before a minute from now.
        var f = new OperatorFixture(a => a["revocations"] = new JsonObject { [revokedKey.GetPublicKey()] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 60 });
        var (userKey, userJwt) = f.User(n =>
        {
            n["pub"] = new JsonObject { ["allow"] = new JsonArray("greet.>") };
            n["sub"] = new JsonObject { ["allow"] = new JsonArray("greet.>", "_INBOX.>") };
        });
        var revokedJwt = JwtMinter.User(f.Account, revokedKey.GetPublicKey());
        var creds = Path.Combine(_dir, "user.creds");
        var revoked = Path.Combine(_dir, "revoked.creds");
        await File.WriteAllTextAsync(creds, JwtMinter.Creds(userJwt, userKey));
        await File.WriteAllTextAsync(revoked, JwtMinter.Creds(revokedJwt, revokedKey));

        var (goServer, oursServer) = await TestServers.StartPairAsync(f.Settings());
        await using var go = goServer;
        await using var ours = oursServer;
        var goLines = await RunAsync(client, go.Port, creds, revoked);
        var oursLines = await RunAsync(client, ours.Port, creds, revoked);
        Assert.Equal(Expected, goLines);
        Assert.Equal(goLines, oursLines);
    }

    private static async Task<string[]> RunAsync(string client, int port, string creds, string revoked)
    {
        var url = $"nats://127.0.0.1:{port}";
        var output = client switch
        {
            "natsnet" => await NatsNetAsync(url, creds, revoked),
            "nats.go" => await NatsGoProgram.RunAsync("credsclient", ClientTimeout, url, creds, revoked),
            "nats.c" => await NatsCProgram.RunAsync("credsclient", ClientTimeout, url, creds, revoked),
            _ => await NodeAsync(url, creds, revoked),
        };
        return output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
    }

    private static async Task<string> NodeAsync(string url, string creds, string revoked)
    {
        var result = await NodeRunner.RunScriptAsync("creds.mjs", url, creds, revoked);
        Assert.True(result.ExitCode == 0, $"creds.mjs failed (exit {result.ExitCode}):\n{result.Output}");
        return result.Output;
    }

    private static async Task<string> NatsNetAsync(string url, string creds, string revoked)
    {
        var lines = new List<string>();
        var violation = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using (var nats = new NatsConnection(new NatsOpts { Url = url, AuthOpts = new NatsAuthOpts { CredsFile = creds }, MaxReconnectRetry = 0 }))
        {
            nats.ServerError += (_, e) =>
            {
                violation.TrySetResult(e.Error);
                return ValueTask.CompletedTask;
            };
            await nats.ConnectAsync();
            lines.Add("connected");
            await using var sub = await nats.SubscribeCoreAsync<string>("greet.>");
            await nats.PublishAsync("greet.a", "hello");
            using var cts = new CancellationTokenSource(ClientTimeout);
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            lines.Add($"received {msg.Subject} {msg.Data}");
            await nats.PublishAsync("secret.x", "no");
            var error = await violation.Task.WaitAsync(ClientTimeout);
            var m = ViolationText().Match(error);
            lines.Add(m.Success ? $"violation {m.Groups[1].Value.ToLowerInvariant()} {m.Groups[2].Value}" : $"error {error}");
        }
        await using var refused = new NatsConnection(new NatsOpts { Url = url, AuthOpts = new NatsAuthOpts { CredsFile = revoked }, MaxReconnectRetry = 0 });
        try
        {
            await refused.ConnectAsync();
            lines.Add("revoked connected");
        }
        catch (NatsException e) when (e.ToString().Contains("Authorization Violation", StringComparison.OrdinalIgnoreCase))
        {
            lines.Add("revoked Authorization Violation");
        }
        return string.Join('\n', lines);
    }

    [GeneratedRegex("Permissions Violation for (Publish|Subscription) to \"?([^\"\\s]+)\"?")]
    private static partial Regex ViolationText();

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
