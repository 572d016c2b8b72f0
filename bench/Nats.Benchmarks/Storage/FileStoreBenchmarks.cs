using BenchmarkDotNet.Attributes;
using Nats.Storage;
using Nats.Storage.File;

namespace Nats.Benchmarks.Storage;

/// <summary>
/// File store hot paths, comparable with the seed's table: append of a 128-byte message (each call
/// reaches the OS in write-through mode; batched in buffered mode), and loading the last message of a
/// subject whose block is cached.
/// </summary>
[MemoryDiagnoser]
public class FileStoreBenchmarks
{
    private readonly byte[] _payload = new byte[128];
    private readonly StoredMessage _reuse = new();
    private string _dir = "";
    private IStreamStore _store = null!;

    [Params(nameof(FileWriteMode.WriteThrough), nameof(FileWriteMode.Buffered))]
    public string Mode { get; set; } = "";

    [GlobalSetup]
    public void Setup()
    {
        _dir = Path.Combine(Path.GetTempPath(), "nats-bench-" + Guid.NewGuid().ToString("N"));
        _store = StreamStores.OpenFile(new StoreConfig { Name = "BENCH" },
            new FileStoreOptions { Directory = _dir, WriteMode = Enum.Parse<FileWriteMode>(Mode), SyncMode = FileSyncMode.Interval });
        for (var i = 0; i < 10_000; i++)
        {
            _store.StoreMsg($"bench.{i % 100}", default, _payload);
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _store.Delete();

    [Benchmark(Description = "FileStore append 128B")]
    public ulong Append() => _store.StoreMsg("bench.append", default, _payload).Seq;

    [Benchmark(Description = "FileStore load last by subject (hot)")]
    public ulong LoadLastBySubject() => _store.LoadLastMsg("bench.42", _reuse)!.Sequence;
}

/// <summary>
/// Purge by subject with keep, then trim the stream from the front: one op stores 1,000 messages over
/// 10 subjects, purges one subject down to its newest message and compacts away all but the newest
/// 500 messages. The seed's exact workload is not recorded, so compare orders of magnitude only.
/// </summary>
[MemoryDiagnoser]
public class FileStorePurgeBenchmarks
{
    private readonly byte[] _payload = new byte[128];
    private string _dir = "";
    private IStreamStore _store = null!;

    [GlobalSetup]
    public void Setup()
    {
        _dir = Path.Combine(Path.GetTempPath(), "nats-bench-" + Guid.NewGuid().ToString("N"));
        _store = StreamStores.OpenFile(new StoreConfig { Name = "PURGE" }, new FileStoreOptions { Directory = _dir, SyncMode = FileSyncMode.Interval });
    }

    [GlobalCleanup]
    public void Cleanup() => _store.Delete();

    [Benchmark(Description = "FileStore PurgeEx+Trim")]
    public ulong PurgeExAndTrim()
    {
        for (var i = 0; i < 1000; i++)
        {
            _store.StoreMsg(Subjects[i % 10], default, _payload);
        }

        var purged = _store.PurgeEx("purge.3", 0, 1);
        var last = _store.State().LastSeq;
        return purged + _store.Compact(last - 499);
    }

    private static readonly string[] Subjects = Enumerable.Range(0, 10).Select(i => $"purge.{i}").ToArray();
}
