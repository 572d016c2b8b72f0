using System.Diagnostics;
using Nats.Benchmarks.Storage;
using Nats.Storage.File;
using Nats.Storage.IO;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// "durable-append-probe [seconds]": raw fsync/fdatasync latency of this machine's disk (128-byte
/// appends, each synced), then durable appends (group commit) and Go-style interval-sync appends at
/// 1, 16 and 256 writers: acknowledged appends/s, fsyncs/s, p50/p99 ack latency.
/// </summary>
internal static class DurableAppendProbe
{
    public static async Task<int> RunAsync(double seconds)
    {
        Console.WriteLine($"disk sync latency (128 B append then sync, {Path.GetTempPath()}):");
        foreach (var data in new[] { true, false })
        {
            RawSync(data, TimeSpan.FromSeconds(Math.Min(seconds, 3)));
        }

        Console.WriteLine();
        Console.WriteLine("| Mode | Writers | acked appends/s | fsyncs/s | appends per fsync | p50 ack | p99 ack |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|");
        foreach (var (mode, write) in new[] { (FileSyncMode.GroupCommit, FileWriteMode.WriteThrough), (FileSyncMode.GroupCommit, FileWriteMode.Buffered), (FileSyncMode.Interval, FileWriteMode.WriteThrough) })
        {
            foreach (var writers in new[] { 1, 16, 256 })
            {
                await Measure(mode, write, writers, seconds);
            }
        }
        return 0;
    }

    private static void RawSync(bool dataOnly, TimeSpan duration)
    {
        var path = Path.Combine(Path.GetTempPath(), "nats-fsync-" + Guid.NewGuid().ToString("N"));
        var fs = OsFileSystem.Instance;
        using (var f = fs.Open(path, StoreFileMode.Create))
        using (var h = System.IO.File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite))
        {
            var buf = new byte[128];
            var lat = new List<double>();
            long off = 0;
            var sw = Stopwatch.StartNew();
            while (sw.Elapsed < duration)
            {
                var t = Stopwatch.GetTimestamp();
                f.Write(buf, off);
                off += buf.Length;
                if (dataOnly)
                {
                    f.Sync();
                }
                else
                {
                    RandomAccess.FlushToDisk(h);
                }

                lat.Add(Stopwatch.GetElapsedTime(t).TotalMicroseconds);
            }
            lat.Sort();
            Console.WriteLine($"  {(dataOnly ? "fdatasync" : "fsync    ")}: {lat.Count / duration.TotalSeconds,8:F0}/s  p50 {lat[lat.Count / 2],7:F0} us  p99 {lat[(int)(lat.Count * 0.99)],7:F0} us  max {lat[^1],7:F0} us");
        }
        System.IO.File.Delete(path);
    }

    private static async Task Measure(FileSyncMode mode, FileWriteMode write, int writers, double seconds)
    {
        await using var run = new DurableAppend(mode, write);
        await run.Run(writers, 64); // warm-up
        // Size the run from a short calibration so it lasts about the requested time.
        var sw = Stopwatch.StartNew();
        await run.Run(writers, 256);
        var rate = writers * 256 / Math.Max(sw.Elapsed.TotalSeconds, 1e-3);
        var perWriter = Math.Max(16, (int)(rate * seconds / writers));
        var latencies = new long[writers * perWriter];
        var rounds0 = run.SyncRounds;
        sw.Restart();
        await run.Run(writers, perWriter, latencies);
        var elapsed = sw.Elapsed.TotalSeconds;
        var rounds = run.SyncRounds - rounds0;
        Array.Sort(latencies);
        double Us(long ticks) => ticks * 1e6 / Stopwatch.Frequency;
        var total = latencies.Length;
        Console.WriteLine($"| {(mode == FileSyncMode.GroupCommit ? "group commit (sync before ack)" : "interval 2 min (ack before sync)")}, {write} | {writers} | {total / elapsed:F0} | {rounds / elapsed:F0} | {(rounds == 0 ? "-" : (total / (double)rounds).ToString("F1"))} | {Us(latencies[total / 2]):F0} us | {Us(latencies[(int)(total * 0.99)]):F0} us |");
    }
}
