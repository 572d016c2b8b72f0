using System.IO.Compression;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;

namespace Nats.Server.IntegrationTests.WebSocket;

/// <summary>
/// A WebSocket client written from RFC 6455 for black-box tests: it sends exactly the frames a test
/// asks for (masked or not, fragmented, control frames) and reads the server's frames raw.
/// </summary>
internal sealed class RawWebSocket : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    private readonly Socket _socket;
    private readonly NetworkStream _stream;
    private readonly List<byte> _pending = [];

    private RawWebSocket(Socket socket)
    {
        _socket = socket;
        _stream = new NetworkStream(socket, ownsSocket: true);
    }

    public int Status { get; private set; }
    public Dictionary<string, string> Headers { get; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Connects and sends the upgrade request; returns after the response headers (any status).</summary>
    public static async Task<RawWebSocket> ConnectAsync(int port, IEnumerable<string>? extraHeaders = null, string method = "GET", bool skipUpgradeHeader = false, string version = "13")
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        var ws = new RawWebSocket(socket);
        var request = new StringBuilder();
        request.Append($"{method} / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
        if (!skipUpgradeHeader)
        {
            request.Append("Upgrade: websocket\r\n");
        }
        request.Append($"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: {version}\r\n");
        foreach (var header in extraHeaders ?? [])
        {
            request.Append(header).Append("\r\n");
        }
        request.Append("\r\n");
        await ws._stream.WriteAsync(Encoding.ASCII.GetBytes(request.ToString()));
        await ws.ReadHeadersAsync();
        return ws;
    }

    /// <summary>Sends one frame; client frames are masked unless <paramref name="masked"/> is false.</summary>
    public async Task SendFrameAsync(int opcode, byte[] payload, bool fin = true, bool masked = true)
    {
        var frame = new List<byte> { (byte)((fin ? 0x80 : 0) | opcode) };
        var maskBit = masked ? 0x80 : 0;
        if (payload.Length < 126)
        {
            frame.Add((byte)(maskBit | payload.Length));
        }
        else if (payload.Length <= ushort.MaxValue)
        {
            frame.Add((byte)(maskBit | 126));
            frame.Add((byte)(payload.Length >> 8));
            frame.Add((byte)payload.Length);
        }
        else
        {
            frame.Add((byte)(maskBit | 127));
            for (var i = 7; i >= 0; i--)
            {
                frame.Add((byte)((long)payload.Length >> (8 * i)));
            }
        }
        if (masked)
        {
            var key = RandomNumberGenerator.GetBytes(4);
            frame.AddRange(key);
            frame.AddRange(payload.Select((b, i) => (byte)(b ^ key[i % 4])));
        }
        else
        {
            frame.AddRange(payload);
        }
        await _stream.WriteAsync(frame.ToArray());
    }

    public Task SendTextAsync(string text, bool fin = true, int opcode = 2) => SendFrameAsync(opcode, Encoding.UTF8.GetBytes(text), fin);

    /// <summary>Reads one frame (payload inflated when RSV1 marks it compressed); null when the server closed the TCP connection.</summary>
    public async Task<(int Opcode, byte[] Payload, bool Compressed)?> ReadFrameAsync()
    {
        using var cts = new CancellationTokenSource(Timeout);
        var head = await ReadExactAsync(2, cts.Token);
        if (head is null)
        {
            return null;
        }
        var opcode = head[0] & 0x0f;
        var compressed = (head[0] & 0x40) != 0;
        long length = head[1] & 0x7f;
        if (length == 126)
        {
            var ext = (await ReadExactAsync(2, cts.Token))!;
            length = (ext[0] << 8) | ext[1];
        }
        else if (length == 127)
        {
            var ext = (await ReadExactAsync(8, cts.Token))!;
            length = ext.Aggregate(0L, (acc, b) => (acc << 8) | b);
        }
        var payload = length == 0 ? [] : (await ReadExactAsync((int)length, cts.Token))!;
        if (compressed)
        {
            using var input = new MemoryStream([.. payload, 0x00, 0x00, 0xff, 0xff]);
            using var inflate = new DeflateStream(input, CompressionMode.Decompress);
            using var output = new MemoryStream();
            try
            {
                await inflate.CopyToAsync(output, cts.Token);
            }
            catch (InvalidDataException)
            {
                // The sync-flush tail has no final block; what was inflated is complete.
            }
            payload = output.ToArray();
        }
        return (opcode, payload, compressed);
    }

    /// <summary>Reads data frames until their text contains <paramref name="marker"/>.</summary>
    public async Task<string> ReadTextUntilAsync(string marker)
    {
        var text = new StringBuilder();
        while (!text.ToString().Contains(marker, StringComparison.Ordinal))
        {
            var frame = await ReadFrameAsync() ?? throw new IOException($"closed before '{marker.Trim()}'; got: {text}");
            if (frame.Opcode is 1 or 2 or 0)
            {
                text.Append(Encoding.UTF8.GetString(frame.Payload));
            }
            else if (frame.Opcode == 8)
            {
                throw new IOException($"close frame before '{marker.Trim()}'; got: {text}");
            }
        }
        return text.ToString();
    }

    /// <summary>Skips data frames until a close frame; returns its status code (or -1 when the TCP connection just ended).</summary>
    public async Task<int> ReadCloseCodeAsync()
    {
        while (true)
        {
            var frame = await ReadFrameAsync();
            if (frame is null)
            {
                return -1;
            }
            if (frame.Value.Opcode == 8)
            {
                return frame.Value.Payload.Length >= 2 ? (frame.Value.Payload[0] << 8) | frame.Value.Payload[1] : 1005;
            }
        }
    }

    public async ValueTask DisposeAsync() => await _stream.DisposeAsync();

    private async Task ReadHeadersAsync()
    {
        var text = new StringBuilder();
        using var cts = new CancellationTokenSource(Timeout);
        while (true)
        {
            var one = await ReadExactAsync(1, cts.Token) ?? throw new IOException($"closed during the HTTP response: {text}");
            text.Append((char)one[0]);
            if (text.Length >= 4 && text.ToString(text.Length - 4, 4) == "\r\n\r\n")
            {
                break;
            }
        }
        var lines = text.ToString().Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
        Status = int.Parse(lines[0].Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture);
        foreach (var line in lines.Skip(1))
        {
            var colon = line.IndexOf(':');
            Headers[line[..colon].Trim()] = line[(colon + 1)..].Trim();
        }
    }

    private async Task<byte[]?> ReadExactAsync(int count, CancellationToken token)
    {
        var buffer = new byte[Math.Max(count, 4096)];
        while (_pending.Count < count)
        {
            int read;
            try
            {
                read = await _stream.ReadAsync(buffer, token);
            }
            catch (IOException)
            {
                read = 0;
            }
            if (read == 0)
            {
                return null;
            }
            _pending.AddRange(buffer.AsSpan(0, read));
        }
        var result = _pending.GetRange(0, count).ToArray();
        _pending.RemoveRange(0, count);
        return result;
    }
}
