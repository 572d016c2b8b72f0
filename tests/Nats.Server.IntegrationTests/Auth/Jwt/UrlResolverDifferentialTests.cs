using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// <c>resolver: URL(...)</c>: Go 2.9.10 and ours fetch account JWTs from the same in-test HTTP server;
/// logins and the requests each server made (a loaded account is not fetched again, a missing one is)
/// must agree.
/// </summary>
public sealed class UrlResolverDifferentialTests : IDisposable
{
    private readonly HttpListener _http = new();
    private readonly ConcurrentDictionary<string, string> _jwts = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<string> _requests = new();
    private readonly int _port = FreePort();

    public UrlResolverDifferentialTests()
    {
        _http.Prefixes.Add($"http://127.0.0.1:{_port}/");
        _http.Start();
        _ = ServeAsync();
    }

    [Fact]
    public async Task Accounts_are_fetched_over_http_once_and_missing_ones_each_time_as_go()
    {
        var f = new OperatorFixture();
        var missing = JwtMinter.NewKey(PrefixByte.Account);
        var broken = JwtMinter.NewKey(PrefixByte.Account);
        foreach (var (key, jwt) in f.Accounts)
        {
            _jwts[key] = jwt;
        }
        _jwts[broken.GetPublicKey()] = "not a jwt";
        var (userKey, userJwt) = f.User();
        var strangerKey = JwtMinter.NewKey(PrefixByte.User);
        var stranger = JwtMinter.User(missing, strangerKey.GetPublicKey());
        var brokenKey = JwtMinter.NewKey(PrefixByte.User);
        var brokenUser = JwtMinter.User(broken, brokenKey.GetPublicKey());

        var results = new List<List<string>>();
        foreach (var start in new Func<ServerSettings, Task<ITestServer>>[] { TestServers.StartGoAsync, TestServers.StartOursAsync })
        {
            var settings = new ServerSettings { AuthTimeoutSeconds = ServerSettings.GenerousAuthTimeoutSeconds };
            settings.RawConfig.Add($"operator: \"{f.OperatorJwt}\"");
            settings.RawConfig.Add($"resolver: URL(\"http://127.0.0.1:{_port}/jwt/v1/accounts/\")");
            await using var server = await start(settings);
            _requests.Clear();
            var result = new List<string>();
            for (var i = 0; i < 2; i++)
            {
                result.Add("user: " + string.Join(" | ", await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(userJwt, userKey, nonce), "")));
                result.Add("stranger: " + string.Join(" | ", await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(stranger, strangerKey, nonce), "")));
                result.Add("broken: " + string.Join(" | ", await JwtTranscript.RunAsync(server.Port, nonce => OperatorFixture.Connect(brokenUser, brokenKey, nonce), "")));
            }
            var names = new Dictionary<string, string>
            {
                [f.Account.GetPublicKey()] = "account",
                [missing.GetPublicKey()] = "missing",
                [broken.GetPublicKey()] = "broken",
            };
            result.Add("fetched: " + string.Join(", ", _requests
                .Select(p => names.GetValueOrDefault(p.Split('/')[^1], p))
                .Where(n => n is "account" or "missing" or "broken")
                .GroupBy(n => n).OrderBy(g => g.Key, StringComparer.Ordinal).Select(g => $"{g.Key} x{g.Count()}")));
            results.Add(result);
        }
        Assert.Equal(results[0], results[1]);
        Assert.StartsWith("user: +OK | PONG", results[0][0], StringComparison.Ordinal);
        Assert.Contains("Authorization Violation", results[0][1], StringComparison.Ordinal);
    }

    private async Task ServeAsync()
    {
        while (_http.IsListening)
        {
            HttpListenerContext context;
            try
            {
                context = await _http.GetContextAsync();
            }
            catch (Exception e) when (e is HttpListenerException or ObjectDisposedException)
            {
                return;
            }
            var path = context.Request.Url!.AbsolutePath;
            _requests.Enqueue(path);
            if (path == "/jwt/v1/accounts/")
            {
                // Go's start-up check that the account server answers.
                context.Response.StatusCode = 200;
            }
            else if (path.StartsWith("/jwt/v1/accounts/", StringComparison.Ordinal) && _jwts.TryGetValue(path.Split('/')[^1], out var jwt))
            {
                var body = Encoding.UTF8.GetBytes(jwt);
                context.Response.StatusCode = 200;
                await context.Response.OutputStream.WriteAsync(body);
            }
            else
            {
                context.Response.StatusCode = 404;
            }
            context.Response.Close();
        }
    }

    private static int FreePort() => Infrastructure.FreePorts.Next();

    public void Dispose() => _http.Close();
}
