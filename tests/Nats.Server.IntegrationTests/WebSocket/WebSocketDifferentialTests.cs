using System.Text;
using System.Text.Json;

namespace Nats.Server.IntegrationTests.WebSocket;

/// <summary>
/// Raw RFC 6455 frames to the Go server 2.9.10 and to ours with the same websocket {} block: the
/// upgrade answers, masking, fragmentation, control frames, close codes, compression negotiation and
/// origin checks must come out the same.
/// </summary>
public sealed class WebSocketDifferentialTests
{
    private const string Connect = "CONNECT {\"verbose\":false,\"headers\":true}\r\n";

    [Fact]
    public async Task Nats_protocol_over_masked_fragmented_frames_matches_go()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        var results = new List<string>();
        foreach (var (_, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port);
            Assert.Equal(101, ws.Status);
            var info = await ws.ReadTextUntilAsync("\r\n");
            var keys = string.Join(",", JsonDocument.Parse(info[5..].Trim()).RootElement.EnumerateObject().Select(p => p.Name));
            await ws.SendTextAsync(Connect + "SUB a 1\r\nPU", fin: false);
            await ws.SendTextAsync("B a 5\r\nhel", fin: false, opcode: 0);
            await ws.SendTextAsync("lo\r\nPING\r\n", fin: true, opcode: 0);
            var transcript = await ws.ReadTextUntilAsync("PONG\r\n");
            // A ping control frame between data frames is answered with its payload.
            await ws.SendFrameAsync(9, Encoding.ASCII.GetBytes("are you there"));
            var pong = await ws.ReadFrameAsync();
            results.Add($"{keys}|{transcript}|{pong!.Value.Opcode}:{Encoding.ASCII.GetString(pong.Value.Payload)}");
        }
        Assert.Equal(results[0], results[1]);
        Assert.Contains("MSG a 1 5\r\nhello\r\nPONG", results[1]);
    }

    [Fact]
    public async Task Close_frame_is_answered_and_the_client_is_gone_as_with_go()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        var codes = new List<int>();
        foreach (var (_, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port);
            await ws.ReadTextUntilAsync("\r\n");
            await ws.SendFrameAsync(8, [0x03, 0xe8]);
            codes.Add(await ws.ReadCloseCodeAsync());
        }
        Assert.Equal(codes[0], codes[1]);
        await pair.Ours.Log.WaitForAsync("Client connection closed");
        Assert.Equal(0, pair.Ours.Server.ClientCount);
    }

    [Fact]
    public async Task Unmasked_client_frame_closes_that_connection_only()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        foreach (var (kind, port) in pair.Ports)
        {
            await using var healthy = await RawWebSocket.ConnectAsync(port);
            await healthy.ReadTextUntilAsync("\r\n");
            await using var ws = await RawWebSocket.ConnectAsync(port);
            await ws.ReadTextUntilAsync("\r\n");
            await ws.SendFrameAsync(2, Encoding.ASCII.GetBytes(Connect + "PING\r\n"), masked: false);
            var code = await ws.ReadCloseCodeAsync();
            Assert.True(code is 1002 or -1, $"{kind}: close code {code}");
            await healthy.SendTextAsync(Connect + "PING\r\n");
            Assert.Contains("PONG", await healthy.ReadTextUntilAsync("PONG\r\n"));
        }
    }

    [Fact]
    public async Task Nats_No_Masking_request_is_echoed_and_unmasked_frames_are_read_as_with_go()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        var results = new List<string>();
        foreach (var (_, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port, ["Nats-No-Masking: true"]);
            Assert.Equal(101, ws.Status);
            await ws.ReadTextUntilAsync("\r\n");
            await ws.SendFrameAsync(2, Encoding.ASCII.GetBytes(Connect + "SUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n"), masked: false);
            var transcript = await ws.ReadTextUntilAsync("PONG\r\n");
            results.Add($"{ws.Headers.GetValueOrDefault("Nats-No-Masking")}|{transcript}");
        }
        Assert.Equal(results[0], results[1]);
        Assert.Equal("true|MSG a 1 2\r\nhi\r\nPONG\r\n", results[1]);
    }

    [Fact]
    public async Task Nats_No_Masking_other_than_true_keeps_masking_required_as_with_go()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        foreach (var (kind, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port, ["Nats-No-Masking: yes"]);
            Assert.False(ws.Headers.ContainsKey("Nats-No-Masking"), kind);
            await ws.ReadTextUntilAsync("\r\n");
            await ws.SendFrameAsync(2, Encoding.ASCII.GetBytes(Connect + "PING\r\n"), masked: false);
            var code = await ws.ReadCloseCodeAsync();
            Assert.True(code is 1002 or -1, $"{kind}: close code {code}");
        }
    }

    [Theory]
    [InlineData("POST", false, "13", 405)]
    [InlineData("GET", true, "13", 400)]
    [InlineData("GET", false, "8", 400)]
    public async Task Bad_upgrade_requests_get_gos_status_and_log_line(string method, bool skipUpgrade, string version, int status)
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true");
        var lines = new List<string>();
        foreach (var (kind, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port, method: method, skipUpgradeHeader: skipUpgrade, version: version);
            Assert.True(ws.Status == status, $"{method}/{skipUpgrade}/{version} on {kind}: status {ws.Status}");
            lines.Add(Strip(await pair.LogLineAsync(kind, "websocket handshake error")));
        }
        Assert.Equal(lines[0], lines[1]);
    }

    [Theory]
    [InlineData("same_origin: true", "http://evil.example:80", 403)]
    [InlineData("same_origin: true", "", 101)]
    [InlineData("allowed_origins: [\"http://good.example\"]", "http://good.example", 101)]
    [InlineData("allowed_origins: [\"http://good.example\"]", "https://good.example", 403)]
    [InlineData("allowed_origins: [\"http://good.example\"]", "http://bad.example", 403)]
    public async Task Origin_checks_match_go(string option, string origin, int status)
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true\n  " + option);
        var lines = new List<string>();
        foreach (var (kind, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port, origin == "" ? [] : [$"Origin: {origin}"]);
            Assert.True(ws.Status == status, $"{kind}: {ws.Status}");
            if (status == 403)
            {
                lines.Add(Strip(await pair.LogLineAsync(kind, "websocket handshake error")));
            }
        }
        if (status == 403)
        {
            Assert.Equal(lines[0], lines[1]);
        }
    }

    [Fact]
    public async Task Compression_is_negotiated_when_offered_and_messages_still_flow()
    {
        await using var pair = await WebSocketPair.StartAsync("no_tls: true\n  compression: true");
        var transcripts = new List<string>();
        foreach (var (kind, port) in pair.Ports)
        {
            await using var ws = await RawWebSocket.ConnectAsync(port, ["Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"]);
            Assert.True(ws.Headers.TryGetValue("Sec-WebSocket-Extensions", out var ext) && ext.StartsWith("permessage-deflate", StringComparison.Ordinal), $"{kind}: {ext}");
            await ws.ReadTextUntilAsync("\r\n");
            var big = new string('z', 2000);
            await ws.SendTextAsync(Connect + $"SUB c 1\r\nPUB c {big.Length}\r\n{big}\r\nPING\r\n");
            transcripts.Add(await ws.ReadTextUntilAsync("PONG\r\n"));
        }
        Assert.Equal(transcripts[0], transcripts[1]);
    }

    /// <summary>"[ERR] 127.0.0.1:N - websocket handshake error: x" → "[ERR] websocket handshake error: x".</summary>
    private static string Strip(string line)
    {
        var at = line.IndexOf("websocket handshake error", StringComparison.Ordinal);
        return line[..5] + " " + line[at..];
    }
}

