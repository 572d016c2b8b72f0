using System.Diagnostics;
using Nats.Storage;
using Nats.Storage.File;

namespace Nats.Benchmarks.Storage;

/// <summary>
/// The shared workload of the durable-append benchmark and probe: W concurrent writers, each appending
/// 128-byte messages to one file store and awaiting each message's durability ticket before the next
/// (a publisher with one message in flight per writer, acknowledged only when durable).
/// </summary>
internal sealed class DurableAppend : IAsyncDisposable
{
    private static readonly byte[] Payload = new byte[128];
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "nats-durable-" + Guid.NewGuid().ToString("N"));
    private readonly FileStore _store;

    public DurableAppend(FileSyncMode mode, FileWriteMode write = FileWriteMode.WriteThrough)
    {
        Mode = mode;
        _store = (FileStore)StreamStores.OpenFile(new StoreConfig { Name = "DURABLE" },
            new FileStoreOptions { Directory = _dir, SyncMode = mode, WriteMode = write });
    }

    public FileSyncMode Mode { get; }

    public long SyncRounds => _store.SyncRounds;

    /// <summary>Each writer appends <paramref name="perWriter"/> messages; ack latencies (Stopwatch
    /// ticks) go into <paramref name="latencies"/> when given (writers × perWriter long).</summary>
    public Task Run(int writers, int perWriter, long[]? latencies = null)
    {
        var tasks = new Task[writers];
        for (var w = 0; w < writers; w++)
        {
            var offset = w * perWriter;
            tasks[w] = Task.Run(() => Writer(perWriter, latencies, offset));
        }
        return Task.WhenAll(tasks);
    }

    private async Task Writer(int count, long[]? latencies, int offset)
    {
        for (var i = 0; i < count; i++)
        {
            var start = Stopwatch.GetTimestamp();
            var r = _store.StoreMsg("durable.append", default, Payload);
            await r.Durable;
            if (latencies is not null)
            {
                latencies[offset + i] = Stopwatch.GetTimestamp() - start;
            }
        }
    }

    public ValueTask DisposeAsync()
    {
        _store.Delete();
        return ValueTask.CompletedTask;
    }
}
