using System.Diagnostics;
using Nats.Storage;
using Nats.Storage.File;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// "store-crash-probe N [payload bytes]": the open of a file store after a crash, with and without the
/// running stream state checkpoints. Fills a store the way JetStream does (group commit, buffered
/// messages) with N messages on 1,000 subjects, waits until they are durable and the last checkpoint is
/// written, then abandons it without a stop (to the disk, what kill -9 leaves) and times a new store's
/// open on the same directory up to its first state, and a read of every message after it (index pages
/// rebuilt from block indexes, or from the blocks when only seal summaries were written). Also splits the
/// bytes on disk by file kind.
/// </summary>
internal static class StoreCrashProbe
{
    public static int Run(int n, int payloadSize)
    {
        foreach (var (checkpoints, blockIndexes) in new[] { (false, true), (false, false), (true, true), (true, false) })
        {
            var dir = Path.Combine(Path.GetTempPath(), "nats-crash-probe-" + Guid.NewGuid().ToString("N"));
            var config = new StoreConfig { Name = "CRASH" };
            var options = new FileStoreOptions
            {
                Directory = dir,
                WriteMode = FileWriteMode.BufferedMessages,
                CheckpointInterval = checkpoints ? TimeSpan.FromSeconds(1) : Timeout.InfiniteTimeSpan,
                BlockIndexes = blockIndexes,
            };
            var payload = new byte[payloadSize];
            try
            {
                var store = (FileStore)StreamStores.OpenFile(config, options);
                var fill = Stopwatch.StartNew();
                var tickets = new List<DurabilityTicket>();
                for (var i = 0; i < n; i++)
                {
                    tickets.Add(store.StoreMsg("SCALE." + (i % 1000).ToString(System.Globalization.CultureInfo.InvariantCulture), default, payload).Durable);
                    if (tickets.Count == 256)
                    {
                        tickets[0].Wait();
                        tickets.RemoveAt(0);
                    }
                }
                foreach (var t in tickets)
                {
                    t.Wait();
                }
                var filled = fill.Elapsed;

                if (checkpoints)
                {
                    // One more round after the interval, so the newest checkpoint covers the whole stream.
                    var written = store.CheckpointsWritten;
                    Thread.Sleep(1100);
                    store.SkipMsg();
                    store.WhenDurable().Wait();
                    SpinWait.SpinUntil(() => store.CheckpointsWritten > written, TimeSpan.FromSeconds(30));
                }

                var files = new DirectoryInfo(dir).EnumerateFiles("*", SearchOption.AllDirectories).ToList();
                string Sum(string ext) => (files.Where(f => f.Extension == ext).Sum(f => f.Length) / 1e6).ToString("F1", System.Globalization.CultureInfo.InvariantCulture);
                Console.WriteLine($"{n:N0} x {payloadSize} B, checkpoints {(checkpoints ? "on" : "off")}, block indexes {(blockIndexes ? "per message" : "seal summaries")}: {files.Sum(f => f.Length) / 1e6:F1} MB on disk "
                    + $"(blocks {Sum(".blk")} MB, block indexes {Sum(".idx")} MB, state {Sum(".db")} MB); {store.CheckpointsWritten} checkpoints written; filled at {n / filled.TotalSeconds:N0} msg/s (256 in flight)");

                // The crash: the store is dropped without a stop; everything it wrote is durable.
                var sw = Stopwatch.StartNew();
                var reopened = (FileStore)StreamStores.OpenFile(config, options);
                var state = reopened.State();
                Console.WriteLine($"  open after the crash: {sw.Elapsed.TotalMilliseconds:F0} ms to the first state ({state.Msgs:N0} msgs); "
                    + $"from the state file: {reopened.OpenedFromState}, blocks replayed after it: {reopened.RecoveredTailBlocks}");
                sw.Restart();
                var allocated = GC.GetTotalAllocatedBytes(precise: true);
                var reuse = new StoredMessage();
                var read = 0;
                for (var seq = 1UL; reopened.LoadNextMsg(">", seq, reuse) is { } sm; seq = sm.Sequence + 1)
                {
                    read++;
                }
                Console.WriteLine($"  then read all {read:N0} in {sw.Elapsed.TotalMilliseconds:F0} ms ({read / sw.Elapsed.TotalSeconds:N0} msg/s, "
                    + $"{reopened.IndexPageLoads:N0} index pages rebuilt, {(GC.GetTotalAllocatedBytes(precise: true) - allocated) / 1e6:F1} MB allocated)");
                reopened.Stop();
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
        return 0;
    }
}
