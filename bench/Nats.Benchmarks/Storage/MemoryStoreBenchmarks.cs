using BenchmarkDotNet.Attributes;
using Nats.Storage;

namespace Nats.Benchmarks.Storage;

/// <summary>
/// The Go PR's Benchmark_MemStoreLoadNextMsgFiltered: 10M messages on "foo.bar", one in every 100,000
/// on its own "foo.baz.N" subject; one op walks every "foo.baz.*" match with LoadNextMsg until EOF
/// (Go after the PR: about 205 us per pass for the bounded case).
/// </summary>
[MemoryDiagnoser]
public class MemoryStoreLoadNextBenchmarks
{
    private const int Messages = 10_000_000;
    private readonly StoredMessage _reuse = new();
    private IStreamStore _store = null!;

    [Params(100_000, 10_000)]
    public int MatchEvery { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _store = StreamStores.CreateMemory(new StoreConfig { Name = "TEST" });
        var msg = "ok"u8.ToArray();
        for (var i = 0; i < Messages; i++)
        {
            _store.StoreMsg(i % MatchEvery == 0 ? $"foo.baz.{i}" : "foo.bar", default, msg);
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _store.Stop();

    [Benchmark(Description = "MemoryStore LoadNext wildcard pass")]
    public int WildcardPass()
    {
        var count = 0;
        ulong start = 0;
        while (_store.LoadNextMsg("foo.baz.*", start, _reuse) is { } m)
        {
            count++;
            start = m.Sequence + 1;
        }
        if (count != Messages / MatchEvery)
        {
            throw new InvalidOperationException($"expected {Messages / MatchEvery} matches, got {count}");
        }

        return count;
    }
}
