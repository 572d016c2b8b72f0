using System.Diagnostics;
using System.Text;
using Nats.Storage.File;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>
/// A failed fsync (EIO once, as Linux reports a writeback error) must never be followed by an
/// acknowledgement of anything it covered; a failed reservation must never hand a sequence out twice;
/// data found by recovery after a kill is made durable before the store is used; a long lost tail is
/// reported as a range.
/// </summary>
public sealed class SyncFailureTests
{
    private static readonly byte[] Payload = Encoding.UTF8.GetBytes("sync failure payload");
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private static void WaitForHeldSyncs(CrashFileSystem fs, int count)
    {
        var sw = Stopwatch.StartNew();
        while (fs.HeldSyncs < count)
        {
            Assert.True(sw.Elapsed < Wait, $"{fs.HeldSyncs} of {count} syncs reached the gate");
            Thread.Yield();
        }
    }

    [Fact]
    public async Task AFailedCompactionFsyncFailsTheTicketsOfEverythingWrittenBeforeIt()
    {
        var fs = new CrashFileSystem();
        var warnings = new List<string>();
        var failures = new List<string>();
        // Three 53-byte messages do not fit one block: c rotates into block 2.
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 110, warnings: warnings) with { Failed = failures.Add });
        StoreResult c;
        using (var hold = fs.HoldSyncs(CrashStores.BlockPath(1)))
        {
            // Two rounds in flight, both stuck syncing block 1: the next writes wait in the open round.
            var a = store.StoreMsg("a", default, Payload);
            WaitForHeldSyncs(fs, 1);
            var b = store.StoreMsg("b", default, Payload);
            WaitForHeldSyncs(fs, 2);
            c = store.StoreMsg("c", default, Payload); // rotates into block 2
            Assert.True(store.BlockPaths.Count >= 2);
            Assert.False(c.Durable.IsCompleted);
            // Block 1 empties, so the compaction pass restates markers in block 2 and fsyncs it: EIO.
            fs.FailSyncOnce(CrashStores.BlockPath(2));
            store.RemoveMsg(a.Seq);
            store.RemoveMsg(b.Seq);
            try
            {
                store.FlushAllPending();
            }
            catch (IOException)
            {
                // Before the fix the error escaped here and was forgotten.
            }
        }
        // Block 2's pages were dropped by the failed fsync: c must not be acknowledged.
        await Assert.ThrowsAnyAsync<Exception>(() => c.Durable.AsTask().WaitAsync(Wait));
        Assert.Equal(StoreError.WriteFailed, Assert.Throws<StoreException>(() => store.StoreMsg("d", default, Payload)).Error);
        Assert.Single(failures);
        Assert.Contains("EIO", failures[0]);
        Assert.Equal("c", store.LoadMsg(c.Seq, null)!.Subject); // reads go on
    }

    [Fact]
    public async Task AFailedRoundFsyncFailsTheStoreAndTheNextRoundDoesNotAcknowledge()
    {
        var fs = new CrashFileSystem();
        var failures = new List<string>();
        var store = CrashStores.Open(CrashStores.Options(fs) with { Failed = failures.Add });
        await store.StoreMsg("a", default, Payload).Durable;
        fs.FailSyncOnce(".blk");
        var b = store.StoreMsg("b", default, Payload);
        await Assert.ThrowsAnyAsync<IOException>(() => b.Durable.AsTask().WaitAsync(Wait));
        Assert.Throws<StoreException>(() => store.StoreMsg("c", default, Payload));
        await Assert.ThrowsAnyAsync<IOException>(() => store.WhenDurable().AsTask().WaitAsync(Wait));
        Assert.Single(failures);
        store.Stop();
        // Not a clean stop: the next open re-verifies and fsyncs, and b is whatever the disk kept.
        var reopened = CrashStores.Open(CrashStores.Options(fs));
        Assert.Equal("a", reopened.LoadMsg(1, null)!.Subject);
        Assert.True(reopened.StoreMsg("c", default, Payload).Seq > 2);
        reopened.Stop();
    }

    [Fact]
    public void AFailedReservationFsyncNeverHandsOutASequenceTwice()
    {
        var fs = new CrashFileSystem();
        var warnings = new List<string>();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 64 * 1024, reserve: 4, warnings: warnings));
        var handedOut = new List<ulong>();
        ulong failedAt = 0;
        using (fs.HoldSyncs("meta.dat"))
        {
            // The round carrying the next reservation is stuck, so a writer outruns it and must
            // reserve inline; that inline fsync fails.
            handedOut.Add(store.StoreMsg("s", default, Payload).Seq);
            handedOut.Add(store.StoreMsg("s", default, Payload).Seq);
            WaitForHeldSyncs(fs, 1);
            fs.FailSyncOnce("meta.dat");
            for (var i = 0; i < 20 && failedAt == 0; i++)
            {
                try
                {
                    handedOut.Add(store.StoreMsg("s", default, Payload).Seq);
                }
                catch (Exception e) when (e is IOException or StoreException)
                {
                    failedAt = (ulong)handedOut.Count + 1;
                }
            }
            Assert.NotEqual(0UL, failedAt);
        }
        // Before the fix the store handed the same sequence out again here.
        Assert.Throws<StoreException>(() => handedOut.Add(store.StoreMsg("s", default, Payload).Seq));
        Assert.Equal(handedOut.Count, handedOut.Distinct().Count());
        // Reopened without a clean stop: every sequence handed out is served once, with no out-of-order copy.
        var reopened = CrashStores.Open(CrashStores.Options(fs, blockSize: 64 * 1024, reserve: 4, warnings: warnings));
        Assert.DoesNotContain(warnings, w => w.Contains("out-of-order"));
        foreach (var seq in handedOut)
        {
            Assert.Equal("s", reopened.LoadMsg(seq, null)!.Subject);
        }
        Assert.True(reopened.StoreMsg("s", default, Payload).Seq > failedAt);
        reopened.Stop();
    }

    [Fact]
    public void DataRecoveredAfterAKillIsFsyncedBeforeTheStoreIsUsed()
    {
        var fs = new CrashFileSystem();
        // Go's policy (acknowledge before fsync) so nothing syncs the blocks on the way; a manual clock, so no timer does.
        var options = CrashStores.Options(fs) with { SyncMode = FileSyncMode.Interval };
        var killed = CrashStores.Open(options);
        for (var i = 0; i < 20; i++)
        {
            killed.StoreMsg("k", default, Payload);
        }
        // kill -9: the process is gone, its writes are in the page cache. The restarted store answers from them
        // (a duplicate's PubAck, a redelivery), so they must be on disk before it answers anything.
        var restarted = CrashStores.Open(options);
        Assert.Equal(20UL, restarted.State().Msgs);
        fs.Crash(new Random(1), dropAllUnsynced: true);
        var afterPowerCut = CrashStores.Open(options);
        Assert.Equal(20UL, afterPowerCut.State().Msgs);
        afterPowerCut.Stop();
    }

    [Fact]
    public void AMillionMessageLostTailIsReportedAsOneRange()
    {
        using var dir = new TempDir();
        var warnings = new List<string>();
        var damage = new List<StoreDamage>();
        var options = new FileStoreOptions
        {
            Directory = dir.Path,
            WriteMode = FileWriteMode.Buffered,
            SyncMode = FileSyncMode.Interval,
            BlockSize = 1024 * 1024,
            Clock = new ManualClock(),
        };
        const int total = 1_000_000;
        var store = StreamStores.OpenFile(new StoreConfig { Name = "TAIL" }, options);
        for (var i = 0; i < total; i++)
        {
            store.StoreMsg("t", default, default);
        }
        store.Stop();
        // Every block but the first disappears after the clean stop.
        var blocks = Directory.GetFiles(Path.Combine(dir.Path, "msgs"), "*.blk").Order().ToArray();
        Assert.True(blocks.Length > 2);
        foreach (var b in blocks.Skip(1))
        {
            System.IO.File.Delete(b);
            System.IO.File.Delete(Path.ChangeExtension(b, ".idx"));
        }

        var sw = Stopwatch.StartNew();
        var reopened = StreamStores.OpenFile(new StoreConfig { Name = "TAIL" },
            options with { Warn = warnings.Add, Damaged = damage.Add });
        sw.Stop();
        var state = reopened.State();
        var lost = total - (long)state.Msgs;
        Assert.True(lost > 900_000, $"{lost} lost");
        Assert.Equal((ulong)lost, state.Lost!.Count);
        Assert.Single(damage);
        Assert.Equal(state.Msgs + 1, damage[0].FirstSeq); // the first block's messages are 1..Msgs
        Assert.Equal((ulong)total, damage[0].LastSeq);
        Assert.Single(warnings, w => w.Contains("missing from the end of the stream"));
        Assert.True(sw.Elapsed < TimeSpan.FromSeconds(20), $"recovery took {sw.Elapsed}");
        reopened.Stop();
    }
}

public sealed class ConsumerDeleteDurabilityTests
{
    [Fact]
    public async Task ADeletedConsumerStaysDeletedAfterAPowerCut()
    {
        var fs = new CrashFileSystem();
        var stream = CrashStores.Open(CrashStores.Options(fs));
        var consumer = stream.ConsumerStore("C", new ConsumerStoreConfig { AckPolicy = AckPolicy.Explicit });
        await consumer.UpdateDelivered(1, 1, 1, 0);
        Assert.NotEmpty(fs.ListFiles(CrashStores.Dir + "/obs/C", ""));
        consumer.Delete();
        fs.Crash(new Random(2), dropAllUnsynced: true);
        Assert.Empty(fs.ListFiles(CrashStores.Dir + "/obs/C", ""));
    }
}
