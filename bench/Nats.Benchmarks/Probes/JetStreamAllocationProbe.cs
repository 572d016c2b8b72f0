using System.Net.Sockets;
using System.Text;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// The JetStream publish path's allocations: an in-process server with a stream, a raw publisher
/// sending batches of PUBs with a reply subject and reading every PubAck back before the next batch,
/// then the process's allocated bytes across the measured run, and the sampled types behind them
/// (a file stream's new 8 MB block caches and its index arrays grow with the data; per-message
/// garbage would show up as small types), then the resident set beside the GC's heap figures, after the
/// run and after a gen0 and a full collection (what a publish leaves resident). File streams run with the default
/// (group commit: acks after the fsync) or Go's policy (sync_interval), memory streams as they are.
/// </summary>
internal static class JetStreamAllocationProbe
{
    public static async Task<int> RunAsync(int messages, string storage, bool goSync)
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();
        var dir = Path.Combine(Path.GetTempPath(), "js-alloc-probe-" + Guid.NewGuid().ToString("N")[..8]);
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        options.JetStream.Enabled = true;
        options.JetStream.StoreDir = dir;
        if (goSync)
        {
            options.JetStream.SyncInterval = TimeSpan.FromMinutes(2);
        }
        try
        {
            await using var server = new NatsServer(options);
            await server.StartAsync();
            var client = await AllocationProbe.ConnectAsync(server.Port, "SUB _INBOX.> 1\r\n");
            var create = $"{{\"name\":\"PROBE\",\"subjects\":[\"js.probe\"],\"storage\":\"{storage}\"}}";
            await client.SendAsync(Encoding.ASCII.GetBytes($"PUB $JS.API.STREAM.CREATE.PROBE _INBOX.create {create.Length}\r\n{create}\r\n"));
            await ReadUntilAsync(client, "\"created\""u8.ToArray());

            var buffer = new byte[256 * 1024];
            await PumpAsync(client, buffer, 20_000); // JIT, pools, the first blocks
            using var types = new AllocationTypes();
            types.On = true;
            var gen0 = GC.CollectionCount(0);
            var allocated = GC.GetTotalAllocatedBytes(precise: true);
            await PumpAsync(client, buffer, messages);
            var delta = GC.GetTotalAllocatedBytes(precise: true) - allocated;
            Console.WriteLine(
                $"JetStream publish, {storage} stream{(storage == "file" ? goSync ? " (sync_interval 2m)" : " (group commit)" : "")}, " +
                $"{messages:N0} messages of 16 B with PubAcks: allocated {delta:N0} bytes ({(double)delta / messages:F3} B/msg), " +
                $"GC gen0 +{GC.CollectionCount(0) - gen0}");
            types.On = false;
            types.Print();
            PrintMemory("after publishing");
            GC.Collect(0);
            PrintMemory("after a gen0 collection");
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            PrintMemory("after an aggressive full collection");
            client.Dispose();
        }
        finally
        {
            try
            {
                Directory.Delete(dir, recursive: true);
            }
            catch (IOException)
            {
            }
        }
        return 0;
    }

    /// <summary>What stays resident after a publish: the GC's view beside the kernel's (anonymous memory
    /// also counts native allocations the GC does not see).</summary>
    private static void PrintMemory(string when)
    {
        var info = GC.GetGCMemoryInfo(GCKind.Any);
        var status = System.IO.File.ReadAllLines("/proc/self/status");
        string Field(string name) => status.FirstOrDefault(l => l.StartsWith(name, StringComparison.Ordinal))?[(name.Length + 1)..].Trim() ?? "?";
        Console.WriteLine(
            $"{when}: RSS {Field("VmRSS")} (anon {Field("RssAnon")}), GC heap {info.HeapSizeBytes / 1e6:F1} MB, committed {info.TotalCommittedBytes / 1e6:F1} MB, " +
            $"fragmented {info.FragmentedBytes / 1e6:F1} MB, pinned {info.PinnedObjectsCount}, finalization pending {info.FinalizationPendingCount}, " +
            $"gen0/1/2 collections {GC.CollectionCount(0)}/{GC.CollectionCount(1)}/{GC.CollectionCount(2)}, gen0 after the last GC {info.GenerationInfo[0].SizeAfterBytes / 1e6:F1} MB");
    }

    private static async Task PumpAsync(Socket client, byte[] buffer, int messages)
    {
        const int batch = 100; // acks in flight, as the harness's async publish row
        var frame = Encoding.ASCII.GetBytes("PUB js.probe _INBOX.ack 16\r\n0123456789abcdef\r\n");
        var block = new byte[frame.Length * batch];
        for (var i = 0; i < batch; i++)
        {
            frame.CopyTo(block, i * frame.Length);
        }
        for (var sent = 0; sent < messages; sent += batch)
        {
            await client.SendAsync(block.AsMemory(), SocketFlags.None);
            await CountAcksAsync(client, buffer, batch);
        }
    }

    private static async Task ReadUntilAsync(Socket client, byte[] marker)
    {
        var buffer = new byte[64 * 1024];
        var filled = 0;
        while (buffer.AsSpan(0, filled).IndexOf(marker) < 0)
        {
            var read = await client.ReceiveAsync(buffer.AsMemory(filled), SocketFlags.None);
            if (read == 0)
            {
                throw new IOException("server closed the connection");
            }
            filled += read;
        }
        if (buffer.AsSpan(0, filled).IndexOf("\"error\""u8) >= 0)
        {
            throw new InvalidOperationException(Encoding.ASCII.GetString(buffer, 0, filled));
        }
    }

    /// <summary>Reads until <paramref name="acks"/> replies arrived: each JSON answer has exactly one closing brace at its end.</summary>
    private static async Task CountAcksAsync(Socket client, byte[] buffer, int acks)
    {
        var seen = 0;
        while (seen < acks)
        {
            var read = await client.ReceiveAsync(buffer.AsMemory(), SocketFlags.None);
            if (read == 0)
            {
                throw new IOException("server closed the connection");
            }
            var span = buffer.AsSpan(0, read);
            if (span.IndexOf("\"error\""u8) >= 0)
            {
                throw new InvalidOperationException(Encoding.ASCII.GetString(span));
            }
            for (var i = span.IndexOf((byte)'}'); i >= 0; i = span.IndexOf((byte)'}'))
            {
                seen++;
                span = span[(i + 1)..];
            }
        }
    }
}
