using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>NATS.Net logs in with an nsc-style creds file (user JWT plus seed) and is refused without one.</summary>
public sealed class CredsClientTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-creds-").FullName;

    [Fact]
    public async Task NatsNet_connects_with_a_creds_file_and_round_trips()
    {
        var f = new OperatorFixture();
        var (key, jwt) = f.User();
        var creds = Path.Combine(_dir, "user.creds");
        await File.WriteAllTextAsync(creds, JwtMinter.Creds(jwt, key));
        await using var server = await TestServers.StartOursAsync(f.Settings());
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", AuthOpts = new NatsAuthOpts { CredsFile = creds } });
        await nats.ConnectAsync();
        await using var sub = await nats.SubscribeCoreAsync<string>("greet");
        await nats.PingAsync();
        await nats.PublishAsync("greet", "hello");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var msg = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal("hello", msg.Data);
    }

    [Fact]
    public async Task NatsNet_without_credentials_is_refused()
    {
        var f = new OperatorFixture();
        await using var server = await TestServers.StartOursAsync(f.Settings());
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", MaxReconnectRetry = 0 });
        var error = await Assert.ThrowsAnyAsync<Exception>(async () => await nats.ConnectAsync());
        Assert.Contains("Authorization Violation", error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Expired_user_is_disconnected_at_expiry_as_go_does()
    {
        var f = new OperatorFixture();
        var settings = f.Settings();
        var (goServer, oursServer) = await TestServers.StartPairAsync(settings);
        await using var go = goServer;
        await using var ours = oursServer;
        // Minted once the servers run, so both get the same few seconds of validity.
        var (key, jwt) = f.User(top: t => t["exp"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 3);
        var results = await Task.WhenAll(
            JwtTranscript.RunAsync(go.Port, nonce => OperatorFixture.Connect(jwt, key, nonce), "", until: "[never]"),
            JwtTranscript.RunAsync(ours.Port, nonce => OperatorFixture.Connect(jwt, key, nonce), "", until: "[never]"));
        Assert.Equal(["+OK", "-ERR 'User Authentication Expired'", "[closed]"], results[0]);
        Assert.Equal(results[0], results[1]);
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
