using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// Runs one CONNECT (built from the INFO's nonce) plus commands against Go and ours and returns the
/// lines each answered, up to the PONG of a final PING or the close.
/// </summary>
internal static class JwtTranscript
{
    public static async Task<List<string>> BothAsync(ServerSettings settings, Func<string, string> connectJson, string commands = "")
    {
        var (goServer, oursServer) = await TestServers.StartPairAsync(settings);
        await using var go = goServer;
        await using var ours = oursServer;
        var results = await Task.WhenAll(RunAsync(go.Port, connectJson, commands), RunAsync(ours.Port, connectJson, commands));
        Assert.Equal(results[0], results[1]);
        return results[0];
    }

    /// <param name="port">Server port.</param>
    /// <param name="connectJson">CONNECT body from the nonce.</param>
    /// <param name="commands">Sent after CONNECT, before the closing PING.</param>
    /// <param name="until">Stops at this line instead of PONG (for lines that arrive later).</param>
    public static async Task<List<string>> RunAsync(int port, Func<string, string> connectJson, string commands, string until = "PONG")
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var received = new StringBuilder();
        var buffer = new byte[64 * 1024];
        var lines = new List<string>();
        string? info = null;
        while (true)
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
                return lines;
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
                    var tail = until == "PONG" ? "PING\r\n" : "";
                    await socket.SendAsync(Encoding.UTF8.GetBytes($"CONNECT {connectJson(nonce)}\r\n{commands}{tail}"), SocketFlags.None);
                    continue;
                }
                if (line == "PING")
                {
                    await socket.SendAsync("PONG\r\n"u8.ToArray(), SocketFlags.None);
                    continue;
                }
                lines.Add(line);
                if (line == until)
                {
                    return lines;
                }
            }
        }
    }
}
