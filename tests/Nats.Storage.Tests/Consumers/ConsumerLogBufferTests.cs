using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Consumers;

/// <summary>
/// A consumer records every delivery; the log must not cost a write per record. Records wait in memory
/// for their sync round (or a full buffer) and still become durable before their tickets complete.
/// </summary>
public sealed class ConsumerLogBufferTests
{
    [Fact]
    public async Task DeliveriesWhileARoundSyncsShareOneWriteAndSurvivePowerLoss()
    {
        var fs = new CrashFileSystem();
        var options = CrashStores.Options(fs);
        var stream = CrashStores.Open(options);
        var consumer = stream.ConsumerStore("C", new ConsumerStoreConfig { AckPolicy = AckPolicy.Explicit });
        DurabilityTicket last;
        var before = fs.Writes;
        var logBefore = fs.Log.Count;
        // The store names its log by snapshot generation (creating the consumer may already have written
        // one), so hold the syncs of whichever log file is current rather than assuming "log.0".
        var log = Assert.Single(fs.ListFiles("/crash/stream/obs/C", ""), p => Path.GetFileName(p).StartsWith("log.", StringComparison.Ordinal));
        using (fs.HoldSyncs(log))
        {
            for (ulong i = 1; i <= 1_000; i++)
            {
                _ = consumer.UpdateDelivered(i, i, 1, (long)i);
            }
            last = consumer.UpdateAcks(1, 1);
            // Two rounds may have collected (and then stalled in their fsync); the rest waits in memory.
            Assert.True(fs.Writes - before <= 2, $"{fs.Writes - before} writes for 1,001 records while syncs stall: {string.Join(", ", fs.Log.Skip(logBefore))}");
            Assert.False(last.IsCompleted, $"completed while syncs stall: {string.Join(", ", fs.Log.Skip(logBefore))}");
        }
        await last.AsTask().WaitAsync(TimeSpan.FromSeconds(60));
        Assert.True(fs.Writes - before <= 3, $"{fs.Writes - before} writes for 1,001 records");

        fs.Crash(new Random(1), dropAllUnsynced: true);
        var reopened = CrashStores.Open(options).ConsumerStore("C").State();
        Assert.Equal(new SequencePair(1_000, 1_000), reopened.Delivered);
        Assert.Equal(new SequencePair(1, 1), reopened.AckFloor);
        Assert.Equal(999, reopened.Pending.Count);
    }
}
