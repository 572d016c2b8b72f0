using System.Net.Sockets;
using System.Text;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// Runs an in-process server and pushes messages through it over loopback (pub/sub 1:1 and 1:4
/// fan-out), then reports the process's allocated bytes and GC counts across the run. The clients
/// are allocation-free after set-up (pre-built frames, one receive buffer), so what is counted is
/// the server's read, match, fan-out and write path in steady state.
/// </summary>
internal static class AllocationProbe
{
    public static async Task<int> RunAsync(int messages, bool mapped = false, int payload = 16)
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        if (mapped)
        {
            options.Mappings = [new Nats.Server.Mappings.SubjectMapping("x.*", "{{wildcard(1)}}")];
        }
        var publishSubject = mapped ? "x.probe" : "probe";
        await using var server = new NatsServer(options);
        await server.StartAsync();

        foreach (var subscribers in new[] { 1, 4 })
        {
            var subs = new List<Socket>();
            for (var i = 0; i < subscribers; i++)
            {
                subs.Add(await ConnectAsync(server.Port, "SUB probe 1\r\n"));
            }
            var publisher = await ConnectAsync(server.Port, "");
            // Receive buffers are allocated up front so the measured window holds only the server's allocations.
            var buffers = subs.Select(_ => new byte[256 * 1024]).ToArray();

            // Warm up: JIT, caches, pooled buffers.
            await PumpAsync(publisher, subs, buffers, 50_000, publishSubject, payload);

            using var types = new AllocationTypes();
            types.On = true;
            var gen0 = GC.CollectionCount(0);
            var gen1 = GC.CollectionCount(1);
            var gen2 = GC.CollectionCount(2);
            var allocated = GC.GetTotalAllocatedBytes(precise: true);
            await PumpAsync(publisher, subs, buffers, messages, publishSubject, payload);
            var allocatedAfter = GC.GetTotalAllocatedBytes(precise: true);
            types.On = false;

            var delta = allocatedAfter - allocated;
            Console.WriteLine(
                $"pub/sub 1:{subscribers}{(mapped ? " through a mapping" : "")}, {messages:N0} messages of {payload} B: allocated {delta:N0} bytes " +
                $"({(double)delta / messages:F3} B/msg), GC gen0 +{GC.CollectionCount(0) - gen0}, " +
                $"gen1 +{GC.CollectionCount(1) - gen1}, gen2 +{GC.CollectionCount(2) - gen2}; outbound chunks: peak in use " +
                $"{Nats.Server.Clients.OutboundChunkPool.Shared.PeakRentedBytes / 1024:N0} KiB, idle {Nats.Server.Clients.OutboundChunkPool.Shared.RetainedBytes / 1024:N0} KiB");
            if (delta > messages / 10)
            {
                types.Print();
            }

            publisher.Dispose();
            foreach (var s in subs)
            {
                s.Dispose();
            }
        }
        return 0;
    }

    internal static async Task<Socket> ConnectAsync(int port, string setup, string credentials = "")
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync("127.0.0.1", port);
        await socket.SendAsync(Encoding.ASCII.GetBytes("CONNECT {\"verbose\":false,\"pedantic\":false" + credentials + "}\r\n" + setup + "PING\r\n"));
        await ReadUntilAsync(socket, "PONG\r\n"u8.ToArray());
        return socket;
    }

    /// <summary>Publishes in batches with a window, and counts deliveries by bytes (every frame has the same size).</summary>
    internal static async Task PumpAsync(Socket publisher, List<Socket> subscribers, byte[][] buffers, int messages, string subject, int payload = 16)
    {
        var batch = payload <= 64 ? 1000 : Math.Max(1, 64 * 1024 / (payload + 32));
        var body = new string('x', payload);
        var frame = Encoding.ASCII.GetBytes($"PUB {subject} {payload}\r\n{body}\r\n");
        var delivered = Encoding.ASCII.GetBytes($"MSG probe 1 {payload}\r\n{body}\r\n").Length;
        var block = new byte[frame.Length * batch];
        for (var i = 0; i < batch; i++)
        {
            frame.CopyTo(block, i * frame.Length);
        }
        var expected = (long)delivered * messages;
        var readers = subscribers.Select((s, index) => Task.Run(async () =>
        {
            var buffer = buffers[index];
            long total = 0;
            while (total < expected)
            {
                var read = await s.ReceiveAsync(buffer.AsMemory(), SocketFlags.None);
                if (read == 0)
                {
                    throw new IOException("subscriber closed");
                }
                total += read;
            }
        })).ToArray();
        for (var sent = 0; sent < messages; sent += batch)
        {
            // The last block is cut to what is left, so exactly `messages` are sent.
            await publisher.SendAsync(block.AsMemory(0, frame.Length * Math.Min(batch, messages - sent)), SocketFlags.None);
        }
        await Task.WhenAll(readers);
    }

    private static async Task ReadUntilAsync(Socket socket, byte[] marker)
    {
        var buffer = new byte[4096];
        var seen = new List<byte>();
        while (true)
        {
            var read = await socket.ReceiveAsync(buffer, SocketFlags.None);
            if (read == 0)
            {
                throw new IOException("closed");
            }
            seen.AddRange(buffer.AsSpan(0, read).ToArray());
            if (seen.Count >= marker.Length && seen.ToArray().AsSpan().IndexOf(marker) >= 0)
            {
                return;
            }
        }
    }
}
