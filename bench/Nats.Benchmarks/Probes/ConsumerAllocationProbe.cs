using System.Buffers.Text;
using System.Net.Sockets;
using System.Text;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// JetStream consumer delivery in steady state: an in-process server with a memory stream pre-filled
/// with N messages of 16 B, read (1) by a durable pull consumer fetching batches of 500 and acking every
/// message explicitly, and (2) by a push consumer with ack none. Reports the process's allocated bytes
/// and GC counts across the reading only. The raw-socket client parses deliveries and builds its acks
/// in buffers allocated up front, so what is counted is the server's pull request, store read, delivery
/// and ack path.
/// </summary>
internal static class ConsumerAllocationProbe
{
    private const int Batch = 500;

    public static async Task<int> RunAsync(int messages)
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        options.JetStream.Enabled = true;
        options.JetStream.StoreDir = Path.Combine(Path.GetTempPath(), "alloc-probe-consumer-" + Guid.NewGuid().ToString("N"));
        try
        {
            await using var server = new NatsServer(options);
            await server.StartAsync();
            var client = await AllocationProbe.ConnectAsync(server.Port, "SUB _INBOX.probe.> 1\r\n");
            var reader = new FrameReader(client);

            await ApiAsync(client, reader, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p"],"storage":"memory"}""");
            await PrefillAsync(client, reader, messages);

            await ApiAsync(client, reader, "$JS.API.CONSUMER.DURABLE.CREATE.P.WARM", """{"stream_name":"P","config":{"durable_name":"WARM","ack_policy":"explicit","max_ack_pending":-1}}""");
            await FetchAllAsync(client, reader, "WARM", Math.Min(messages, 50_000));
            await ApiAsync(client, reader, "$JS.API.CONSUMER.DURABLE.CREATE.P.C", """{"stream_name":"P","config":{"durable_name":"C","ack_policy":"explicit","max_ack_pending":-1}}""");
            await MeasureAsync($"durable pull, fetch {Batch} + explicit ack, {messages:N0} messages of 16 B", messages,
                () => FetchAllAsync(client, reader, "C", messages));

            var push = await AllocationProbe.ConnectAsync(server.Port, "SUB d.probe 1\r\n");
            await ApiAsync(client, reader, "$JS.API.CONSUMER.DURABLE.CREATE.P.PW", """{"stream_name":"P","config":{"durable_name":"PW","ack_policy":"none","deliver_subject":"d.probe","opt_start_seq":1,"deliver_policy":"by_start_sequence"}}""");
            await CountAsync(new FrameReader(push), messages);
            await MeasureAsync($"push, ack none, {messages:N0} messages of 16 B", messages, async () =>
            {
                await ApiAsync(client, reader, "$JS.API.CONSUMER.DURABLE.CREATE.P.PC", """{"stream_name":"P","config":{"durable_name":"PC","ack_policy":"none","deliver_subject":"d.probe","deliver_policy":"all"}}""");
                await CountAsync(new FrameReader(push), messages);
            });
            push.Dispose();
            client.Dispose();
        }
        finally
        {
            try
            {
                Directory.Delete(options.JetStream.StoreDir, recursive: true);
            }
            catch (DirectoryNotFoundException)
            {
            }
        }
        return 0;
    }

    private static async Task MeasureAsync(string label, int messages, Func<Task> run)
    {
        var gen0 = GC.CollectionCount(0);
        var gen1 = GC.CollectionCount(1);
        var gen2 = GC.CollectionCount(2);
        var allocated = GC.GetTotalAllocatedBytes(precise: true);
        await run();
        var delta = GC.GetTotalAllocatedBytes(precise: true) - allocated;
        Console.WriteLine(
            $"{label}: allocated {delta:N0} bytes ({(double)delta / messages:F3} B/msg), GC gen0 +{GC.CollectionCount(0) - gen0}, " +
            $"gen1 +{GC.CollectionCount(1) - gen1}, gen2 +{GC.CollectionCount(2) - gen2}");
    }

    private static async Task ApiAsync(Socket client, FrameReader reader, string subject, string json)
    {
        var body = Encoding.UTF8.GetBytes(json);
        await client.SendAsync(Encoding.ASCII.GetBytes($"PUB {subject} _INBOX.probe.api {body.Length}\r\n{json}\r\n"), SocketFlags.None);
        var frame = await reader.NextAsync();
        if (frame.Payload.Span.IndexOf("\"error\""u8) >= 0)
        {
            throw new InvalidOperationException($"{subject}: {Encoding.UTF8.GetString(frame.Payload.Span)}");
        }
    }

    private static async Task PrefillAsync(Socket client, FrameReader reader, int messages)
    {
        var frame = Encoding.ASCII.GetBytes("PUB p _INBOX.probe.ack 16\r\n0123456789abcdef\r\n");
        const int window = 1000;
        var block = new byte[frame.Length * window];
        for (var i = 0; i < window; i++)
        {
            frame.CopyTo(block, i * frame.Length);
        }
        for (var sent = 0; sent < messages; sent += window)
        {
            var n = Math.Min(window, messages - sent);
            await client.SendAsync(block.AsMemory(0, n * frame.Length), SocketFlags.None);
            for (var i = 0; i < n; i++)
            {
                await reader.NextAsync();
            }
        }
    }

    /// <summary>Fetches <paramref name="messages"/> in batches, acking each delivery with its own reply subject.</summary>
    private static async Task FetchAllAsync(Socket client, FrameReader reader, string consumer, int messages)
    {
        var request = Encoding.ASCII.GetBytes($"PUB $JS.API.CONSUMER.MSG.NEXT.P.{consumer} _INBOX.probe.f 3\r\n{Batch}\r\n");
        var acks = new byte[Batch * 128];
        var got = 0;
        while (got < messages)
        {
            await client.SendAsync(request, SocketFlags.None);
            var want = Math.Min(Batch, messages - got);
            var length = 0;
            for (var i = 0; i < want; i++)
            {
                var frame = await reader.NextAsync();
                length += AckFrame(frame.Reply.Span, acks.AsSpan(length));
            }
            got += want;
            await client.SendAsync(acks.AsMemory(0, length), SocketFlags.None);
        }
    }

    private static int AckFrame(ReadOnlySpan<byte> reply, Span<byte> into)
    {
        "PUB "u8.CopyTo(into);
        reply.CopyTo(into[4..]);
        var length = 4 + reply.Length;
        " 0\r\n\r\n"u8.CopyTo(into[length..]);
        return length + 6;
    }

    private static async Task CountAsync(FrameReader reader, int messages)
    {
        for (var i = 0; i < messages; i++)
        {
            await reader.NextAsync();
        }
    }

    private readonly record struct Frame(ReadOnlyMemory<byte> Reply, ReadOnlyMemory<byte> Payload);

    /// <summary>MSG / HMSG frames from one socket, parsed in place in one growing buffer (no per-frame allocation).</summary>
    private sealed class FrameReader(Socket socket)
    {
        private byte[] _buffer = new byte[1 << 20];
        private int _start;
        private int _end;

        public async ValueTask<Frame> NextAsync()
        {
            while (true)
            {
                if (TryParse(out var frame))
                {
                    return frame;
                }
                if (_start > 0)
                {
                    Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
                    _end -= _start;
                    _start = 0;
                }
                if (_end == _buffer.Length)
                {
                    Array.Resize(ref _buffer, _buffer.Length * 2);
                }
                var read = await socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None);
                if (read == 0)
                {
                    throw new IOException("server closed the probe's connection after: " + Encoding.ASCII.GetString(_buffer, Math.Max(0, _end - 400), Math.Min(400, _end)));
                }
                _end += read;
            }
        }

        private bool TryParse(out Frame frame)
        {
            frame = default;
            while (true)
            {
                var span = _buffer.AsSpan(_start, _end - _start);
                var eol = span.IndexOf("\r\n"u8);
                if (eol < 0)
                {
                    return false;
                }
                var line = span[..eol];
                var isHeaders = line.StartsWith("HMSG "u8);
                if (!isHeaders && !line.StartsWith("MSG "u8))
                {
                    if (line.StartsWith("-ERR"u8))
                    {
                        throw new IOException("server: " + Encoding.ASCII.GetString(line));
                    }
                    _start += eol + 2; // PING, +OK, INFO: not deliveries
                    if (line.SequenceEqual("PING"u8))
                    {
                        socket.Send("PONG\r\n"u8);
                    }
                    continue;
                }
                // MSG subject sid [reply] size | HMSG subject sid [reply] hsize tsize
                Span<Range> tokens = stackalloc Range[6];
                var count = 0;
                for (var i = 0; i < line.Length && count < tokens.Length;)
                {
                    var next = line[i..].IndexOf((byte)' ');
                    var stop = next < 0 ? line.Length : i + next;
                    if (stop > i)
                    {
                        tokens[count++] = new Range(i, stop);
                    }
                    i = stop + 1;
                }
                var sizeIndex = count - 1;
                var replyIndex = isHeaders ? (count == 6 ? 3 : -1) : (count == 5 ? 3 : -1);
                Utf8Parser.TryParse(line[tokens[sizeIndex]], out int total, out _);
                if (span.Length < eol + 2 + total + 2)
                {
                    return false;
                }
                var lineStart = _start;
                var payloadStart = _start + eol + 2;
                var reply = replyIndex < 0 ? default : _buffer.AsMemory(lineStart + tokens[replyIndex].Start.Value, tokens[replyIndex].End.Value - tokens[replyIndex].Start.Value);
                frame = new Frame(reply, _buffer.AsMemory(payloadStart, total));
                _start = payloadStart + total + 2;
                return true;
            }
        }
    }
}
