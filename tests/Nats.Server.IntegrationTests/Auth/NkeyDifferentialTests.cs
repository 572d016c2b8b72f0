using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Nats.Server.Auth;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth;

namespace Nats.Server.IntegrationTests.Auth;

/// <summary>
/// Nkey logins need the nonce from each connection's INFO signed, which the script language cannot
/// do; these tests sign it in C# and require the Go server and ours to answer identically.
/// </summary>
public sealed class NkeyDifferentialTests
{
    private static readonly NATS.NKeys.KeyPair UserSeed = SeededKeyPair.Create([.. Enumerable.Range(0, 32).Select(i => (byte)(i * 7 + 1))]);
    private static readonly NATS.NKeys.KeyPair OtherSeed = SeededKeyPair.Create([.. Enumerable.Range(0, 32).Select(i => (byte)(255 - i))]);
    private static readonly string UserKey = UserSeed.GetPublicKey();

    [Fact]
    public async Task Signed_nonce_logs_in_and_nkey_permissions_apply()
    {
        var settings = ServerSettings.Parse([$"nkeys={UserKey}", $"pub_deny.{UserKey}=no.>"]);
        var transcript = await BothAsync(settings, nonce => Connect(UserKey, Sign(UserSeed, nonce)),
            "SUB yes.* 1\r\nPUB yes.a 2\r\nhi\r\nPUB no.a 2\r\nhi\r\n");
        Assert.Equal(["+OK", "+OK", "+OK", "MSG yes.a 1 2", "hi", "-ERR 'Permissions Violation for Publish to \"no.a\"'", "PONG"], transcript);
    }

    [Fact]
    public async Task Padded_standard_base64_signature_is_accepted()
    {
        var settings = ServerSettings.Parse([$"nkeys={UserKey}"]);
        var transcript = await BothAsync(settings, nonce => Connect(UserKey, Convert.ToBase64String(SeededKeyPair.Sign(UserSeed, Encoding.ASCII.GetBytes(nonce)))), "");
        Assert.Equal(["+OK", "PONG"], transcript);
    }

    [Fact]
    public async Task Signature_over_another_nonce_is_refused()
    {
        var settings = ServerSettings.Parse([$"nkeys={UserKey}"]);
        var transcript = await BothAsync(settings, _ => Connect(UserKey, Sign(UserSeed, "not-the-nonce")), "");
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], transcript);
    }

    [Fact]
    public async Task Signature_by_another_key_is_refused()
    {
        var settings = ServerSettings.Parse([$"nkeys={UserKey}"]);
        var transcript = await BothAsync(settings, nonce => Connect(UserKey, Sign(OtherSeed, nonce)), "");
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], transcript);
    }

    [Fact]
    public async Task Users_and_nkeys_side_by_side()
    {
        var settings = ServerSettings.Parse([$"nkeys={UserKey}", "users=alice:pw"]);
        var byPassword = await BothAsync(settings, _ => "{\"verbose\":true,\"user\":\"alice\",\"pass\":\"pw\"}", "");
        Assert.Equal(["+OK", "PONG"], byPassword);
        var byNkey = await BothAsync(settings, nonce => Connect(UserKey, Sign(UserSeed, nonce)), "");
        Assert.Equal(["+OK", "PONG"], byNkey);
        // With an nkey present the users list is not consulted, even with valid user credentials.
        var mixed = await BothAsync(settings, _ => $"{{\"verbose\":true,\"user\":\"alice\",\"pass\":\"pw\",\"nkey\":\"{UserKey}\",\"sig\":\"AAAA\"}}", "");
        Assert.Equal(["-ERR 'Authorization Violation'", "[closed]"], mixed);
    }

    private static string Connect(string nkey, string sig) => $"{{\"verbose\":true,\"nkey\":\"{nkey}\",\"sig\":\"{sig}\"}}";

    private static string Sign(NATS.NKeys.KeyPair seed, string nonce) => SeededKeyPair.SignNonce(seed, nonce);

    /// <summary>Runs the exchange against Go and ours; asserts they match and returns the transcript.</summary>
    private static async Task<List<string>> BothAsync(ServerSettings settings, Func<string, string> connectJson, string commands)
    {
        var (goServer, oursServer) = await TestServers.StartPairAsync(settings);
        await using var go = goServer;
        await using var ours = oursServer;
        var results = await Task.WhenAll(RunAsync(go.Port, connectJson, commands), RunAsync(ours.Port, connectJson, commands));
        Assert.Equal(results[0], results[1]);
        return results[0];
    }

    private static async Task<List<string>> RunAsync(int port, Func<string, string> connectJson, string commands)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var received = new StringBuilder();
        var buffer = new byte[64 * 1024];
        var lines = new List<string>();
        string? info = null;
        var closed = false;
        while (!closed)
        {
            int read;
            try
            {
                read = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            }
            catch (SocketException)
            {
                read = 0;
            }
            if (read == 0)
            {
                lines.Add("[closed]");
                break;
            }
            received.Append(Encoding.UTF8.GetString(buffer, 0, read));
            int end;
            while ((end = received.ToString().IndexOf("\r\n", StringComparison.Ordinal)) >= 0)
            {
                var line = received.ToString(0, end);
                received.Remove(0, end + 2);
                if (info is null)
                {
                    info = line;
                    using var json = JsonDocument.Parse(line["INFO ".Length..]);
                    Assert.True(json.RootElement.GetProperty("auth_required").GetBoolean());
                    var nonce = json.RootElement.GetProperty("nonce").GetString()!;
                    await socket.SendAsync(Encoding.UTF8.GetBytes($"CONNECT {connectJson(nonce)}\r\n{commands}PING\r\n"), SocketFlags.None);
                    continue;
                }
                if (line == "PING")
                {
                    // The server's own keep-alive: answer it and leave it out of the transcript.
                    await socket.SendAsync("PONG\r\n"u8.ToArray(), SocketFlags.None);
                    continue;
                }
                lines.Add(line);
                if (line == "PONG")
                {
                    closed = true;
                    break;
                }
            }
        }
        return lines;
    }
}
