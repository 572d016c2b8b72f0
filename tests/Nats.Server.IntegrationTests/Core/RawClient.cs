using System.Net.Sockets;
using System.Text;

namespace Nats.Server.IntegrationTests.Core;

/// <summary>A bare TCP client speaking raw protocol text, for black-box tests of our server.</summary>
internal sealed class RawClient : IAsyncDisposable
{
    private static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(20);

    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[256 * 1024];
    private readonly StringBuilder _pending = new();

    private RawClient(Socket socket)
    {
        _socket = socket;
    }

    public static async Task<RawClient> ConnectAsync(int port, int? receiveBufferSize = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBufferSize is { } size)
        {
            socket.ReceiveBufferSize = size;
        }
        await socket.ConnectAsync("127.0.0.1", port);
        return new RawClient(socket);
    }

    public Task SendAsync(string text) => SendAsync(Encoding.UTF8.GetBytes(text));

    public async Task SendAsync(byte[] data)
    {
        var offset = 0;
        while (offset < data.Length)
        {
            offset += await _socket.SendAsync(data.AsMemory(offset), SocketFlags.None);
        }
    }

    /// <summary>Reads until the accumulated text contains <paramref name="marker"/>; returns everything up to and including it.</summary>
    public async Task<string> ReadUntilAsync(string marker, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var text = _pending.ToString();
            var index = text.IndexOf(marker, StringComparison.Ordinal);
            if (index >= 0)
            {
                _pending.Remove(0, index + marker.Length);
                return text[..(index + marker.Length)];
            }
            var read = await _socket.ReceiveAsync(_buffer, SocketFlags.None, cts.Token);
            if (read == 0)
            {
                throw new IOException($"connection closed before '{marker}'; got: {text}");
            }
            _pending.Append(Encoding.UTF8.GetString(_buffer, 0, read));
        }
    }

    /// <summary>Reads whatever arrives next without decoding it; returns the byte count (0 at end of stream).</summary>
    public async Task<int> ReadSomeAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        var read = await _socket.ReceiveAsync(_buffer, SocketFlags.None, cts.Token);
        if (read == 0)
        {
            throw new IOException("connection closed");
        }
        return read;
    }

    /// <summary>Reads everything until the server closes the connection.</summary>
    public async Task<string> ReadToEndAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        try
        {
            while (true)
            {
                var read = await _socket.ReceiveAsync(_buffer, SocketFlags.None, cts.Token);
                if (read == 0)
                {
                    break;
                }
                _pending.Append(Encoding.UTF8.GetString(_buffer, 0, read));
            }
        }
        catch (SocketException)
        {
            // A reset also means the server closed the connection.
        }
        var text = _pending.ToString();
        _pending.Clear();
        return text;
    }

    /// <summary>Sends PING and waits for its PONG: everything the server sent before is then in hand.</summary>
    public async Task<string> SyncAsync()
    {
        await SendAsync("PING\r\n");
        return await ReadUntilAsync("PONG\r\n");
    }

    public async Task<string> ConnectAndReadInfoAsync(string connectJson = "{\"verbose\":false}")
    {
        var info = await ReadUntilAsync("\r\n");
        await SendAsync($"CONNECT {connectJson}\r\n");
        return info;
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }
}
