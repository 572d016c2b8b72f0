using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// JetStream limits from account JWTs (global limits, an R1 tier, an R3-only tier, max_bytes_required,
/// none): NATS.Net creates streams and consumers past each limit on Go 2.9.10 and ours, and the API
/// answers must be the same.
/// </summary>
public sealed class JetStreamClaimsDifferentialTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jwt-js-").FullName;

    [Fact]
    public async Task Stream_and_consumer_creation_meets_the_claims_limits_as_go()
    {
        var f = new OperatorFixture(n => SetLimits(n, l =>
        {
            l["mem_storage"] = 100_000;
            l["disk_storage"] = 100_000;
            l["streams"] = 2;
            l["consumer"] = 1;
        }));
        var accounts = new List<(string Name, KeyPair Key)> { ("global", f.Account) };
        void Add(string name, Action<JsonObject> limits)
        {
            var key = JwtMinter.NewKey(PrefixByte.Account);
            f.Accounts[key.GetPublicKey()] = JwtMinter.Account(f.Operator, key.GetPublicKey(), n => SetLimits(n, limits));
            accounts.Add((name, key));
        }
        Add("r1", l => l["tiered_limits"] = new JsonObject { ["R1"] = Tier(streams: 1) });
        Add("r3", l => l["tiered_limits"] = new JsonObject { ["R3"] = Tier(streams: 1) });
        Add("maxbytes", l =>
        {
            l["mem_storage"] = -1;
            l["disk_storage"] = -1;
            l["streams"] = -1;
            l["consumer"] = -1;
            l["max_bytes_required"] = true;
        });
        Add("none", _ => { });

        var results = new List<List<string>>();
        foreach (var (name, start) in Servers())
        {
            var dir = Path.Combine(_dir, name);
            Directory.CreateDirectory(dir);
            var settings = f.Settings();
            settings.JetStream = true;
            settings.StoreDir = Path.Combine(dir, "js");
            await using var server = await start(settings);
            var result = new List<string>();
            foreach (var (account, key) in accounts)
            {
                var userKey = JwtMinter.NewKey(PrefixByte.User);
                var creds = Path.Combine(dir, account + ".creds");
                await File.WriteAllTextAsync(creds, JwtMinter.Creds(JwtMinter.User(key, userKey.GetPublicKey()), userKey));
                await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", AuthOpts = new NatsAuthOpts { CredsFile = creds } });
                await nats.ConnectAsync();
                var js = new NatsJSContext(nats);
                result.Add($"{account} big: " + await TryAsync(() => js.CreateStreamAsync(new StreamConfig("BIG", ["big"]) { Storage = StreamConfigStorage.Memory, MaxBytes = 200_000 }).AsTask()));
                result.Add($"{account} nobytes: " + await TryAsync(() => js.CreateStreamAsync(new StreamConfig("NOBYTES", ["nobytes"]) { Storage = StreamConfigStorage.Memory }).AsTask()));
                for (var i = 1; i <= 3; i++)
                {
                    result.Add($"{account} s{i}: " + await TryAsync(() => js.CreateStreamAsync(new StreamConfig($"S{i}", [$"s{i}"]) { Storage = StreamConfigStorage.File, MaxBytes = 1000 }).AsTask()));
                }
                // Go picks the tier from num_replicas as sent: R1 only when the client says 1.
                for (var i = 1; i <= 2; i++)
                {
                    result.Add($"{account} r1-{i}: " + await TryAsync(() => js.CreateStreamAsync(new StreamConfig($"R1S{i}", [$"r1s{i}"]) { Storage = StreamConfigStorage.File, MaxBytes = 1000, NumReplicas = 1 }).AsTask()));
                }
                for (var i = 1; i <= 2; i++)
                {
                    result.Add($"{account} c{i}: " + await TryAsync(() => js.CreateOrUpdateConsumerAsync("S1", new ConsumerConfig($"C{i}")).AsTask()));
                }
            }
            results.Add(result);
        }
        Assert.Equal(results[0], results[1]);
        Assert.Contains(results[0], r => r.StartsWith("global s3: 400 10027", StringComparison.Ordinal));
        Assert.Contains(results[0], r => r.StartsWith("r3 s1: 400 10120", StringComparison.Ordinal));
        Assert.Contains(results[0], r => r.StartsWith("r1 r1-2: 400 10027", StringComparison.Ordinal));
    }

    private static void SetLimits(JsonObject nats, Action<JsonObject> limits) => limits((JsonObject)nats["limits"]!);

    private static JsonObject Tier(long streams) => new()
    {
        ["mem_storage"] = -1,
        ["disk_storage"] = -1,
        ["streams"] = streams,
        ["consumer"] = -1,
    };

    private static async Task<string> TryAsync<T>(Func<Task<T>> action)
    {
        try
        {
            await action();
            return "ok";
        }
        catch (NatsJSApiException e)
        {
            return $"{e.Error.Code} {e.Error.ErrCode} {e.Error.Description}";
        }
    }

    private static IEnumerable<(string Name, Func<ServerSettings, Task<ITestServer>> Start)> Servers()
    {
        yield return ("go", TestServers.StartGoAsync);
        yield return ("ours", TestServers.StartOursAsync);
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
