using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// Which types a probe's measured window allocates: the runtime's allocation sampling events (one
/// per ~100 KB allocated, with the type that crossed the threshold), summed per type. Sampled, so
/// small totals are rough; enough to tell per-message garbage from a store's growing index or blocks.
/// </summary>
internal sealed class AllocationTypes : EventListener
{
    public readonly ConcurrentDictionary<string, long> Bytes = new();
    public volatile bool On;

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime")
        {
            EnableEvents(source, EventLevel.Verbose, (EventKeywords)0x1);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (!On || e.EventName is null || !e.EventName.StartsWith("GCAllocationTick") || e.Payload is null)
        {
            return;
        }

        var name = e.PayloadNames!.IndexOf("TypeName") is var i and >= 0 ? e.Payload[i]?.ToString() ?? "?" : "?";
        var amount = e.PayloadNames!.IndexOf("AllocationAmount64") is var j and >= 0 ? Convert.ToInt64(e.Payload[j]) : 100_000;
        Bytes.AddOrUpdate(name, amount, (_, v) => v + amount);
    }

    /// <summary>The largest sampled types, one line each.</summary>
    public void Print()
    {
        foreach (var (k, v) in Bytes.OrderByDescending(kv => kv.Value).Take(15))
        {
            Console.WriteLine($"  {v,12:N0} {k}");
        }
    }
}
