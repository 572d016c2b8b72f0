using BenchmarkDotNet.Attributes;
using Nats.Storage.File;

namespace Nats.Benchmarks.Storage;

/// <summary>
/// Append 128 B with real fsyncs: sync-before-ack through group commit (the default) against Go-style
/// interval sync (acknowledged before fsync), at 1, 16 and 256 concurrent writers. One operation is one
/// acknowledged append. Fsyncs per second and ack latency percentiles come from
/// <c>durable-append-probe</c> (BenchmarkDotNet reports the mean only).
/// </summary>
[MemoryDiagnoser]
public class DurableAppendBenchmarks
{
    private const int Total = 4096;
    private DurableAppend _run = null!;

    [Params(1, 16, 256)]
    public int Writers { get; set; }

    [Params(nameof(FileSyncMode.GroupCommit), nameof(FileSyncMode.Interval))]
    public string Sync { get; set; } = "";

    [GlobalSetup]
    public void Setup() => _run = new DurableAppend(Enum.Parse<FileSyncMode>(Sync));

    [GlobalCleanup]
    public void Cleanup() => _run.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(Description = "FileStore durable append 128B", OperationsPerInvoke = Total)]
    public Task Append() => _run.Run(Writers, Total / Writers);
}
