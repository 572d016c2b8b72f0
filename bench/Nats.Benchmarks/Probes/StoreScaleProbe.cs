using System.Diagnostics;
using Nats.Storage;
using Nats.Storage.File;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// "store-scale-probe N [payload bytes]": what a file store of N small messages costs in memory and in open time, for
/// a full stream and for one whose every message but the oldest and newest was removed (the shape
/// where an index over the whole sequence span pays for sequences that no longer exist). Memory is the
/// managed heap after a full collection, minus the heap before the store existed.
/// </summary>
internal static class StoreScaleProbe
{
    public static int Run(int n, int payloadSize)
    {
        var dir = Path.Combine(Path.GetTempPath(), "nats-scale-probe-" + Guid.NewGuid().ToString("N"));
        var config = new StoreConfig { Name = "SCALE" };
        var options = new FileStoreOptions
        {
            Directory = dir,
            SyncMode = FileSyncMode.Interval,
            WriteMode = FileWriteMode.Buffered,
        };
        var payload = new byte[payloadSize];
        try
        {
            var baseline = Heap();
            var sw = Stopwatch.StartNew();
            var store = StreamStores.OpenFile(config, options);
            store.StoreMsg("keep", default, payload);
            for (var i = 1; i < n - 1; i++)
            {
                store.StoreMsg("bulk", default, payload);
            }

            store.StoreMsg("keep", default, payload);
            store.FlushAllPending();
            var onDisk = new DirectoryInfo(dir).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length);
            Console.WriteLine($"filled {n:N0} messages of {payloadSize} B in {sw.Elapsed.TotalSeconds:F1} s; {onDisk / 1e9:F2} GB on disk");
            Report("full, after writing", Heap() - baseline, n, store);
            store.Stop();
            store = null;

            sw.Restart();
            store = StreamStores.OpenFile(config, options);
            var open = sw.Elapsed;
            Report($"full, after reopening ({open.TotalSeconds:F2} s to open)", Heap() - baseline, n, store);

            sw.Restart();
            store.PurgeEx("bulk", 0, 0);
            store.FlushAllPending();
            Console.WriteLine($"removed {n - 2:N0} messages in {sw.Elapsed.TotalSeconds:F1} s; state {store.State().Msgs} msgs, first {store.State().FirstSeq}, last {store.State().LastSeq}");
            Report("2 live of the span, after removing", Heap() - baseline, n, store);
            store.Stop();
            store = null;

            sw.Restart();
            store = StreamStores.OpenFile(config, options);
            open = sw.Elapsed;
            Report($"2 live of the span, after reopening ({open.TotalSeconds:F2} s to open)", Heap() - baseline, n, store);
            store.Stop();
            return 0;
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
    }

    private static long Heap()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        return GC.GetTotalMemory(forceFullCollection: true);
    }

    // The sequence index's share: 4,096 slots per allocated chunk. The rest of the heap is
    // mostly pooled 8 MB block buffers (active block and cached blocks).
    private static void Report(string what, long bytes, int n, IStreamStore store)
    {
        var index = ((Nats.Storage.Core.StoreCore)store).IndexChunks * 4096L * System.Runtime.CompilerServices.Unsafe.SizeOf<Nats.Storage.Core.Slot>();
        Console.WriteLine($"{what}: managed heap {bytes / (1024.0 * 1024):F1} MB ({(double)bytes / n:F1} B per sequence of the span), "
            + $"sequence index {index / (1024.0 * 1024):F1} MB");
    }
}
