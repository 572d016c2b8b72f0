using System.Diagnostics;
using Nats.Storage.Core;
using Nats.Storage.File;
using Xunit.Abstractions;

namespace Nats.Storage.Tests;

[CollectionDefinition(nameof(ScaleTests), DisableParallelization = true)]
public sealed class ScaleCollection;

/// <summary>Memory and restart time of a file stream do not grow with its length: the same stream shape
/// at 200K and 1M messages, measured after a clean restart and after reading every message.</summary>
[Collection(nameof(ScaleTests))]
public sealed class ScaleTests
{
    private readonly ITestOutputHelper _output;

    public ScaleTests(ITestOutputHelper output) => _output = output;

    private sealed record Sample(long Heap, long IndexBytes, TimeSpan Open, bool FromState, long PageLoadsAtOpen, long HeapAfterRead);

    [Fact]
    public void MemoryAndRestartDoNotGrowWithMessageCount()
    {
        var small = Measure(200_000);
        var large = Measure(1_000_000);
        var report = $"200K: {small}; 1M: {large}";
        _output.WriteLine(report);
        Assert.True(small.FromState && large.FromState, report);
        // A resident index would hold 32 bytes a message: 25.6 MB more for the larger stream.
        Assert.True(large.IndexBytes - small.IndexBytes < 256 * 1024, report);
        Assert.True(large.Heap - small.Heap < 8 << 20, report);
        Assert.True(large.HeapAfterRead - small.HeapAfterRead < 8 << 20, report);
        // Opening reads no message index (at most the newest chunk's): 5x the messages is not 5x the time.
        Assert.True(large.PageLoadsAtOpen <= 1, report);
        Assert.True(large.Open < small.Open * 3 + TimeSpan.FromMilliseconds(150), report);
    }

    private static Sample Measure(int messages)
    {
        using var dir = new TempDir();
        var options = new FileStoreOptions
        {
            Directory = dir.Path,
            SyncMode = FileSyncMode.Interval,
            WriteMode = FileWriteMode.Buffered,
            // Budgets both sizes exceed (block caches are bounded in blocks, the index in bytes), so
            // what remains is whatever grows with the stream.
            BlockSize = 1 << 20,
            MaxIndexBytes = 1 << 20,
        };
        var config = new StoreConfig { Name = "SCALE" };
        var store = StreamStores.OpenFile(config, options);
        var data = new byte[16];
        for (var i = 0; i < messages; i++)
        {
            store.StoreMsg(SubjectOf(i), default, data);
        }
        store.Stop();

        var sw = Stopwatch.StartNew();
        var reopened = (FileStore)StreamStores.OpenFile(config, options);
        _ = reopened.State();
        sw.Stop();
        try
        {
            var loads = reopened.IndexPageLoads;
            var heap = GC.GetTotalMemory(forceFullCollection: true);
            var index = ((StoreCore)reopened).IndexBytes;
            var sm = new StoredMessage();
            ulong next = 1, read = 0;
            while (reopened.LoadNextMsg(">", next, sm) is { } m)
            {
                next = m.Sequence + 1;
                read++;
            }
            Assert.Equal((ulong)messages, read);
            Assert.Equal(SubjectOf(messages - 1), reopened.LoadLastMsg(">", sm)!.Subject);
            _ = reopened.State(); // an operation start: chunks paged in by the read are trimmed
            var heapAfterRead = GC.GetTotalMemory(forceFullCollection: true);
            return new Sample(heap, Math.Max(index, ((StoreCore)reopened).IndexBytes), sw.Elapsed, reopened.OpenedFromState, loads, heapAfterRead);
        }
        finally
        {
            reopened.Stop();
        }
    }

    private static string SubjectOf(int i) => $"scale.{i % 1000}";
}
