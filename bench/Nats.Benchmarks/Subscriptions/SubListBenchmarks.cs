using System.Text;
using BenchmarkDotNet.Attributes;
using Nats.Server.Subscriptions;

namespace Nats.Benchmarks.Subscriptions;

/// <summary>Subscription index matches on a warm cache (the steady state of a publisher).</summary>
[MemoryDiagnoser]
public class SubListBenchmarks
{
    private readonly SubList _exact = new();
    private readonly SubList _wildcard = new();
    private readonly SubList _queue = new();
    private byte[][] _exactSubjects = [];
    private byte[] _wildcardSubject = [];
    private byte[] _queueSubject = [];
    private int _next;

    [GlobalSetup]
    public void Setup()
    {
        _exactSubjects = Enumerable.Range(0, 128).Select(i => Encoding.ASCII.GetBytes($"bench.exact.{i}")).ToArray();
        foreach (var subject in _exactSubjects)
        {
            _exact.Insert(new Subscription(null!, subject, null, "1"u8.ToArray()));
        }
        foreach (var filter in new[] { "bench.*.x", "bench.>", ">", "bench.wild.*" })
        {
            _wildcard.Insert(new Subscription(null!, Encoding.ASCII.GetBytes(filter), null, "1"u8.ToArray()));
        }
        _wildcardSubject = Encoding.ASCII.GetBytes("bench.wild.x");
        for (var i = 0; i < 4; i++)
        {
            _queue.Insert(new Subscription(null!, "bench.queue"u8.ToArray(), "workers"u8.ToArray(), Encoding.ASCII.GetBytes(i.ToString())));
        }
        _queueSubject = "bench.queue"u8.ToArray();
        foreach (var subject in _exactSubjects)
        {
            _exact.Match(subject);
        }
    }

    [Benchmark]
    public int ExactMatch()
    {
        var subject = _exactSubjects[_next++ & 127];
        return _exact.Match(subject).Plain.Length;
    }

    [Benchmark]
    public int WildcardMatch() => _wildcard.Match(_wildcardSubject).Plain.Length;

    [Benchmark]
    public int QueueMatch() => _queue.Match(_queueSubject).QueueGroups.Length;
}
