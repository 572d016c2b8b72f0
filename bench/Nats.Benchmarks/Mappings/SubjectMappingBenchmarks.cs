using BenchmarkDotNet.Attributes;
using Nats.Server.Mappings;

namespace Nats.Benchmarks.Mappings;

/// <summary>
/// The per-message cost of subject mappings on the publish path: a miss against several mappings, a
/// literal hit, a token reorder, a partition and a 50/50 weighted choice.
/// </summary>
[MemoryDiagnoser]
public class SubjectMappingBenchmarks
{
    private SubjectMapper _mapper = null!;
    private byte[] _buffer = [];
    private readonly byte[] _miss = "telemetry.eu.host42.cpu"u8.ToArray();
    private readonly byte[] _literal = "legacy.orders"u8.ToArray();
    private readonly byte[] _reorder = "a.first.second"u8.ToArray();
    private readonly byte[] _partition = "orders.customer-4711"u8.ToArray();
    private readonly byte[] _weighted = "canary.api.v1"u8.ToArray();

    [GlobalSetup]
    public void Setup()
    {
        _mapper = SubjectMapper.Create([
            new SubjectMapping("legacy.orders", "orders.legacy"),
            new SubjectMapping("a.*.*", "b.$2.$1"),
            new SubjectMapping("orders.*", "orders.{{partition(16,1)}}.$1"),
            new SubjectMapping("canary.>", [new MappingDestination("stable.>", 50), new MappingDestination("beta.>", 50)]),
        ])!;
    }

    [Benchmark(Baseline = true)]
    public bool Miss() => _mapper.TryMap(_miss, ref _buffer, out _);

    [Benchmark]
    public int LiteralHit()
    {
        _mapper.TryMap(_literal, ref _buffer, out var length);
        return length;
    }

    [Benchmark]
    public int WildcardReorder()
    {
        _mapper.TryMap(_reorder, ref _buffer, out var length);
        return length;
    }

    [Benchmark]
    public int Partition()
    {
        _mapper.TryMap(_partition, ref _buffer, out var length);
        return length;
    }

    [Benchmark]
    public int Weighted()
    {
        _mapper.TryMap(_weighted, ref _buffer, out var length);
        return length;
    }
}
