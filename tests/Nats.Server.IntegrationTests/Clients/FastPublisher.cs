using System.Buffers.Binary;
using System.Diagnostics;
using System.Net.Sockets;
using System.Text;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// A publisher as fast as a socket allows: PUB frames batched into large buffers and written
/// back to back, faster than any subscriber library reads (like nats.go's buffered publisher).
/// Each payload starts with the publisher's index and an 8-byte sequence so receivers check order.
/// </summary>
internal sealed class FastPublisher : IAsyncDisposable
{
    private const int BatchBytes = 256 * 1024;

    private readonly Socket _socket;

    private FastPublisher(Socket socket) => _socket = socket;

    /// <summary>(elapsed, messages sent) after each batch, to show the publisher's rate over time.</summary>
    public List<(TimeSpan At, long Sent)> Progress { get; } = [];

    public static async Task<FastPublisher> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        var publisher = new FastPublisher(socket);
        await publisher.ReadLineAsync(); // INFO
        await publisher.SendAsync(Encoding.ASCII.GetBytes("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n"));
        return publisher;
    }

    /// <summary>Publishes <paramref name="count"/> messages and returns once the server has read them all (PING/PONG).</summary>
    public async Task PublishAsync(string subject, int publisherIndex, long count, int payloadSize)
    {
        var frameHeader = Encoding.ASCII.GetBytes($"PUB {subject} {payloadSize}\r\n");
        var frameLength = frameHeader.Length + payloadSize + 2;
        var perBatch = Math.Max(1, BatchBytes / frameLength);
        var batch = new byte[perBatch * frameLength];
        for (var i = 0; i < perBatch; i++)
        {
            var frame = batch.AsSpan(i * frameLength, frameLength);
            frameHeader.CopyTo(frame);
            frame.Slice(frameHeader.Length, payloadSize).Fill((byte)'x');
            frame[^2] = (byte)'\r';
            frame[^1] = (byte)'\n';
        }
        var clock = Stopwatch.StartNew();
        long sequence = 0;
        while (sequence < count)
        {
            var inBatch = (int)Math.Min(perBatch, count - sequence);
            for (var i = 0; i < inBatch; i++)
            {
                var payload = batch.AsSpan(i * frameLength + frameHeader.Length, payloadSize);
                payload[0] = (byte)publisherIndex;
                BinaryPrimitives.WriteInt64LittleEndian(payload[1..], sequence++);
            }
            await SendAsync(batch.AsMemory(0, inBatch * frameLength));
            Progress.Add((clock.Elapsed, sequence));
        }
        await SendAsync("PING\r\n"u8.ToArray());
        while (await ReadLineAsync() != "PONG")
        {
        }
    }

    private async Task SendAsync(ReadOnlyMemory<byte> data)
    {
        while (!data.IsEmpty)
        {
            var sent = await _socket.SendAsync(data, SocketFlags.None);
            data = data[sent..];
        }
    }

    private readonly byte[] _readBuffer = new byte[4096];
    private readonly StringBuilder _pending = new();

    private async Task<string> ReadLineAsync()
    {
        while (true)
        {
            var text = _pending.ToString();
            var end = text.IndexOf("\r\n", StringComparison.Ordinal);
            if (end >= 0)
            {
                _pending.Remove(0, end + 2);
                return text[..end];
            }
            using var cts = new CancellationTokenSource(TimeSpan.FromMinutes(3));
            var read = await _socket.ReceiveAsync(_readBuffer, SocketFlags.None, cts.Token);
            if (read == 0)
            {
                throw new IOException($"publisher connection closed by the server; got: {text}");
            }
            _pending.Append(Encoding.ASCII.GetString(_readBuffer, 0, read));
        }
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }
}
