using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Text;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// A client speaking the wire protocol itself, so a test sees every MSG the server sends, for every sid, even
/// after an UNSUB (a library would drop those silently). PINGs are answered, PONGs complete <see cref="PingAsync"/>
/// in order, and messages go to <see cref="OnMessage"/> on the reading task.
/// </summary>
internal sealed class WireClient : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly ConcurrentQueue<TaskCompletionSource> _pongs = new();
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private readonly CancellationTokenSource _stop = new();
    private readonly List<string> _errors = [];
    private Task _reader = Task.CompletedTask;

    private WireClient(Socket socket)
    {
        _socket = socket;
    }

    /// <summary>subject, sid, payload: called for every MSG on the reading task.</summary>
    public Action<string, string, string>? OnMessage { get; set; }

    /// <summary>The -ERR lines received.</summary>
    public IReadOnlyList<string> Errors
    {
        get
        {
            lock (_errors)
            {
                return [.. _errors];
            }
        }
    }

    public Task Closed => _reader;

    /// <summary>Connects, completes the CONNECT handshake and a PING round trip.</summary>
    public static async Task<WireClient> ConnectAsync(int port, Action<string, string, string>? onMessage = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        var client = new WireClient(socket) { OnMessage = onMessage };
        client._reader = client.ReadLoopAsync();
        await client.SendAsync("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1,\"echo\":false}\r\n");
        await client.PingAsync();
        return client;
    }

    public async Task SendAsync(string text)
    {
        var bytes = Encoding.ASCII.GetBytes(text);
        await _writeLock.WaitAsync();
        try
        {
            for (var sent = 0; sent < bytes.Length;)
            {
                sent += await _socket.SendAsync(bytes.AsMemory(sent), SocketFlags.None);
            }
        }
        finally
        {
            _writeLock.Release();
        }
    }

    /// <summary>PING and wait for its PONG: everything sent before has been processed by the server.</summary>
    public async Task PingAsync()
    {
        var pong = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        // Enqueued under the write lock, so queue order is wire order.
        await _writeLock.WaitAsync();
        try
        {
            _pongs.Enqueue(pong);
            await _socket.SendAsync("PING\r\n"u8.ToArray(), SocketFlags.None);
        }
        finally
        {
            _writeLock.Release();
        }
        await pong.Task.WaitAsync(TestCluster.Deadline);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _socket.Dispose();
        try
        {
            await _reader;
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
        }
        _stop.Dispose();
        _writeLock.Dispose();
    }

    private async Task ReadLoopAsync()
    {
        var buffer = new byte[256 * 1024];
        var length = 0;
        while (true)
        {
            if (length == buffer.Length)
            {
                Array.Resize(ref buffer, buffer.Length * 2);
            }
            var n = await _socket.ReceiveAsync(buffer.AsMemory(length), SocketFlags.None, _stop.Token);
            if (n == 0)
            {
                FailPongs();
                return;
            }
            length += n;
            var consumed = await ParseAsync(buffer, length);
            Buffer.BlockCopy(buffer, consumed, buffer, 0, length - consumed);
            length -= consumed;
        }
    }

    /// <summary>Handles every complete frame in buffer[..length]; returns the bytes used.</summary>
    private async Task<int> ParseAsync(byte[] buffer, int length)
    {
        var at = 0;
        while (true)
        {
            var eol = Array.IndexOf(buffer, (byte)'\n', at, length - at);
            if (eol < 0)
            {
                return at;
            }
            var line = Encoding.ASCII.GetString(buffer, at, eol - at).TrimEnd('\r');
            if (line.StartsWith("MSG ", StringComparison.Ordinal))
            {
                var parts = line.Split(' ');
                var size = int.Parse(parts[^1], System.Globalization.CultureInfo.InvariantCulture);
                if (eol + 1 + size + 2 > length)
                {
                    return at;
                }
                OnMessage?.Invoke(parts[1], parts[2], Encoding.ASCII.GetString(buffer, eol + 1, size));
                at = eol + 1 + size + 2;
                continue;
            }
            at = eol + 1;
            if (line == "PING")
            {
                await SendAsync("PONG\r\n");
            }
            else if (line == "PONG" && _pongs.TryDequeue(out var pong))
            {
                pong.TrySetResult();
            }
            else if (line.StartsWith("-ERR", StringComparison.Ordinal))
            {
                lock (_errors)
                {
                    _errors.Add(line);
                }
            }
        }
    }

    private void FailPongs()
    {
        while (_pongs.TryDequeue(out var pong))
        {
            pong.TrySetException(new IOException("connection closed"));
        }
    }
}
