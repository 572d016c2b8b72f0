using Nats.LoadBench.Scenarios;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Running;

internal enum Outcome
{
    Ok,
    NotImplemented,
    Failed,
}

/// <summary>One measured round against one server, with the server's memory after it and the CPU time it spent in the run (null for the sink).
/// A multi-server row also has each server's share (server 0 first).</summary>
internal sealed record RoundResult(Outcome Outcome, Measurement? Measurement, string? Reason, ServerMemory? Memory = null, double? CpuSeconds = null,
    double?[]? CpuEach = null);

/// <summary>All rounds of one row against one server, with the summary the table prints.</summary>
internal sealed class ServerSeries(string label)
{
    public string Label { get; } = label;

    public List<RoundResult> Rounds { get; } = [];

    public Outcome Outcome =>
        Rounds.Any(r => r.Outcome == Outcome.Failed) ? Outcome.Failed
        : Rounds.Count == 0 || Rounds.Any(r => r.Outcome == Outcome.NotImplemented) ? Outcome.NotImplemented
        : Outcome.Ok;

    public string? Reason => Rounds.FirstOrDefault(r => r.Outcome != Outcome.Ok)?.Reason;

    private IEnumerable<Measurement> Ok => Rounds.Where(r => r.Outcome == Outcome.Ok).Select(r => r.Measurement!);

    public double MedianMsgPerSec => Median(Ok.Select(m => m.MsgPerSec));

    public double MinMsgPerSec => Ok.Select(m => m.MsgPerSec).DefaultIfEmpty().Min();

    public double MaxMsgPerSec => Ok.Select(m => m.MsgPerSec).DefaultIfEmpty().Max();

    /// <summary>(max - min) / median across rounds: how far apart the rounds landed.</summary>
    public double RangePercent => MedianMsgPerSec > 0 ? 100.0 * (MaxMsgPerSec - MinMsgPerSec) / MedianMsgPerSec : 0;

    /// <summary>Highest VmHWM of the server over all rounds (each round is a fresh process), failed ones included.</summary>
    public double? PeakRssMb => Rounds.Where(r => r.Memory != null).Select(r => (double?)r.Memory!.PeakMb).Max();

    /// <summary>Highest VmRSS left after a round: memory the server kept once the load was over.</summary>
    public double? EndRssMb => Rounds.Where(r => r.Memory != null).Select(r => (double?)r.Memory!.ResidentMb).Max();

    public double? MedianP50 => Ok.Any(m => m.P50Us != null) ? Median(Ok.Select(m => m.P50Us!.Value)) : null;

    public double? MedianFailoverMs => Ok.Any(m => m.FailoverMs != null) ? Median(Ok.Select(m => m.FailoverMs!.Value)) : null;

    public double? MinFailoverMs => Ok.Select(m => m.FailoverMs).Min();

    public double? MaxFailoverMs => Ok.Select(m => m.FailoverMs).Max();

    public double? MedianP99 => Ok.Any(m => m.P99Us != null) ? Median(Ok.Select(m => m.P99Us!.Value)) : null;

    private static double Median(IEnumerable<double> values)
    {
        var v = values.OrderBy(x => x).ToArray();
        if (v.Length == 0)
        {
            return 0;
        }

        return v.Length % 2 == 1 ? v[v.Length / 2] : (v[(v.Length / 2) - 1] + v[v.Length / 2]) / 2;
    }
}

/// <summary>One table row: Go and ours, or the sink alone for limit rows.</summary>
internal sealed class RowResult(Scenario scenario, ServerSeries first, ServerSeries? second)
{
    public Scenario Scenario { get; } = scenario;

    public ServerSeries Go { get; } = first;

    public ServerSeries? Ours { get; } = second;

    public double MegabytesPerSec(ServerSeries s) => s.MedianMsgPerSec * Scenario.PayloadSize / 1_000_000.0;
}
