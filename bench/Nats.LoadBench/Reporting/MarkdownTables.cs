using System.Globalization;
using System.Text;
using Nats.LoadBench.Running;
using Nats.LoadBench.Scenarios;

namespace Nats.LoadBench.Reporting;

/// <summary>Renders results in the seed tables' shape; the same text goes to the console and BENCHMARKS.md.</summary>
internal static class MarkdownTables
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public static string Render(IReadOnlyList<RowResult> rows)
    {
        var sb = new StringBuilder();
        foreach (var section in rows.Select(r => r.Scenario.Section).Distinct())
        {
            var inSection = rows.Where(r => r.Scenario.Section == section).ToList();
            sb.AppendLine($"### {section}").AppendLine();
            if (section == Catalog.Limit)
            {
                Limit(sb, inSection, rows);
            }
            else if (section == Catalog.JetStreamScale)
            {
                Scale(sb, inSection);
            }
            else if (section == Catalog.Failover)
            {
                Failover(sb, inSection);
            }
            else if (inSection.All(r => r.Scenario.HasLatency))
            {
                Latency(sb, inSection);
            }
            else
            {
                Throughput(sb, inSection);
            }

            sb.AppendLine();
        }

        return sb.ToString();
    }

    private static void Throughput(StringBuilder sb, List<RowResult> rows)
    {
        sb.AppendLine("| Row | Benchmark | Payload | Go msg/s | Go MB/s | ours msg/s | ours MB/s | ours/Go | Go RSS peak/end (MB) | ours RSS peak/end (MB) | Go range | ours range |");
        sb.AppendLine("|-----|-----------|--------:|---------:|--------:|-----------:|----------:|--------:|---------------------:|-----------------------:|---------:|-----------:|");
        foreach (var r in rows)
        {
            var go = r.Go;
            var ours = r.Ours!;
            sb.AppendLine($"| `{r.Scenario.Name}` | {r.Scenario.Title} | {Size(r.Scenario.PayloadSize)} | {Rate(go)} | {Mb(r, go)} | {Rate(ours)} | {Mb(r, ours)} | {Ratio(go, ours)} | {Rss(go)} | {Rss(ours)} | {Range(go)} | {Range(ours)} |");
        }

        Failures(sb, rows);
    }

    /// <summary>Scale rows: the stream's cost besides the consume rate. Figures are medians over the rounds;
    /// RSS after restart is read 2 s after the first stream info, RSS end after the consume.</summary>
    private static void Scale(StringBuilder sb, List<RowResult> rows)
    {
        sb.AppendLine("| Row | Benchmark | Payload | Go publish msg/s | ours publish msg/s | Go disk (MiB) | ours disk (MiB) | Go restart (s) | ours restart (s) | Go RSS after restart (MB) | ours RSS after restart (MB) | Go consume msg/s | ours consume msg/s | ours/Go consume | Go RSS peak/end (MB) | ours RSS peak/end (MB) |");
        sb.AppendLine("|-----|-----------|--------:|-----------------:|-------------------:|--------------:|----------------:|---------------:|-----------------:|--------------------------:|----------------------------:|-----------------:|-------------------:|----------------:|---------------------:|-----------------------:|");
        foreach (var r in rows)
        {
            var go = r.Go;
            var ours = r.Ours!;
            sb.AppendLine($"| `{r.Scenario.Name}` | {r.Scenario.Title} | {Size(r.Scenario.PayloadSize)} | {Fig(go, f => f.PublishMsgPerSec, "N0")} | {Fig(ours, f => f.PublishMsgPerSec, "N0")} | {Fig(go, f => f.DiskMb, "F0")} | {Fig(ours, f => f.DiskMb, "F0")} | {Fig(go, f => f.RestartSeconds, "F3")} | {Fig(ours, f => f.RestartSeconds, "F3")} | {Fig(go, f => f.RssAfterRestartMb, "F1")} | {Fig(ours, f => f.RssAfterRestartMb, "F1")} | {Rate(go)} | {Rate(ours)} | {Ratio(go, ours)} | {Rss(go)} | {Rss(ours)} |");
        }

        Failures(sb, rows);
    }

    private static string Fig(ServerSeries s, Func<ScaleFigures, double> pick, string format)
    {
        var v = s.Rounds.Where(r => r.Outcome == Outcome.Ok && r.Measurement?.Scale != null).Select(r => pick(r.Measurement!.Scale!)).OrderBy(x => x).ToArray();
        return v.Length == 0 ? "-" : v[v.Length / 2].ToString(format, Inv);
    }

    private static void Latency(StringBuilder sb, List<RowResult> rows)
    {
        sb.AppendLine("| Row | Benchmark | Payload | Go msg/s | ours msg/s | ours/Go | Go P50 (us) | ours P50 (us) | Go P99 (us) | ours P99 (us) | Go RSS peak/end (MB) | ours RSS peak/end (MB) | Go range | ours range |");
        sb.AppendLine("|-----|-----------|--------:|---------:|-----------:|--------:|------------:|--------------:|------------:|--------------:|---------------------:|-----------------------:|---------:|-----------:|");
        foreach (var r in rows)
        {
            var go = r.Go;
            var ours = r.Ours!;
            sb.AppendLine($"| `{r.Scenario.Name}` | {r.Scenario.Title} | {Size(r.Scenario.PayloadSize)} | {Rate(go)} | {Rate(ours)} | {Ratio(go, ours)} | {Us(go, go.MedianP50)} | {Us(ours, ours.MedianP50)} | {Us(go, go.MedianP99)} | {Us(ours, ours.MedianP99)} | {Rss(go)} | {Rss(ours)} | {Range(go)} | {Range(ours)} |");
        }

        Failures(sb, rows);
    }

    private static void Failover(StringBuilder sb, List<RowResult> rows)
    {
        sb.AppendLine("| Row | Benchmark | Go failover (ms) | ours failover (ms) | ours/Go (lower is better) | Go min-max (ms) | ours min-max (ms) | Go RSS peak/end (MB) | ours RSS peak/end (MB) |");
        sb.AppendLine("|-----|-----------|-----------------:|-------------------:|--------------------------:|----------------:|------------------:|---------------------:|-----------------------:|");
        foreach (var r in rows)
        {
            var go = r.Go;
            var ours = r.Ours!;
            var ratio = go.Outcome == Outcome.Ok && ours.Outcome == Outcome.Ok && go.MedianFailoverMs is > 0 && ours.MedianFailoverMs is { } o
                ? (o / go.MedianFailoverMs.Value).ToString("F2", Inv) + "x"
                : "-";
            sb.AppendLine($"| `{r.Scenario.Name}` | {r.Scenario.Title} | {Ms(go, go.MedianFailoverMs)} | {Ms(ours, ours.MedianFailoverMs)} | {ratio} | {MinMax(go)} | {MinMax(ours)} | {Rss(go)} | {Rss(ours)} |");
        }

        Failures(sb, rows);
    }

    private static string Ms(ServerSeries s, double? v) => s.Outcome == Outcome.Ok && v != null ? v.Value.ToString("N0", Inv) : Status(s);

    private static string MinMax(ServerSeries s) => s.Outcome == Outcome.Ok && s.MinFailoverMs is { } min && s.MaxFailoverMs is { } max
        ? $"{min.ToString("N0", Inv)}-{max.ToString("N0", Inv)}"
        : "-";

    private static void Limit(StringBuilder sb, List<RowResult> limits, IReadOnlyList<RowResult> all)
    {
        sb.AppendLine("| Row | Benchmark | Payload | limit msg/s | limit MB/s | Go as % of limit | ours as % of limit | limit range |");
        sb.AppendLine("|-----|-----------|--------:|------------:|-----------:|-----------------:|-------------------:|------------:|");
        foreach (var r in limits)
        {
            var sink = r.Go;
            // Compared with the pub-only row of equal payload: how close each server gets to the publisher's ceiling.
            var pubOnly = all.FirstOrDefault(x => x.Scenario is PubSubScenario { Publishers: 1, Subscribers: 0, Transport: Client.Transport.Plain }
                && !x.Scenario.IsLimit && x.Scenario.PayloadSize == r.Scenario.PayloadSize);
            string Pct(ServerSeries? s) => s is { Outcome: Outcome.Ok } && sink.Outcome == Outcome.Ok && sink.MedianMsgPerSec > 0
                ? (100 * s.MedianMsgPerSec / sink.MedianMsgPerSec).ToString("F0", Inv) + " %"
                : "n/a";
            sb.AppendLine($"| `{r.Scenario.Name}` | {r.Scenario.Title} | {Size(r.Scenario.PayloadSize)} | {Rate(sink)} | {Mb(r, sink)} | {Pct(pubOnly?.Go)} | {Pct(pubOnly?.Ours)} | {Range(sink)} |");
        }
    }

    /// <summary>Why each failed cell failed: a figure that is missing must say what went wrong.</summary>
    private static void Failures(StringBuilder sb, List<RowResult> rows)
    {
        var lines = rows.SelectMany(r => new[] { r.Go, r.Ours! }.Where(s => s.Outcome != Outcome.Ok)
            .Select(s => $"- `{r.Scenario.Name}` {s.Label}: {(s.Outcome == Outcome.Failed ? "FAILED" : "not implemented")}: {s.Reason}")).ToList();
        if (lines.Count > 0)
        {
            sb.AppendLine();
            foreach (var l in lines)
            {
                sb.AppendLine(l);
            }
        }
    }

    private static string Rss(ServerSeries s) => s.PeakRssMb is { } peak ? $"{peak.ToString("F0", Inv)} / {s.EndRssMb!.Value.ToString("F0", Inv)}" : "-";

    private static string Status(ServerSeries s) => s.Outcome == Outcome.NotImplemented ? "not implemented" : "FAILED";

    private static string Rate(ServerSeries s) => s.Outcome == Outcome.Ok ? s.MedianMsgPerSec.ToString("N0", Inv) : Status(s);

    private static string Mb(RowResult r, ServerSeries s) => s.Outcome == Outcome.Ok ? r.MegabytesPerSec(s).ToString("F1", Inv) : "-";

    private static string Us(ServerSeries s, double? v) => s.Outcome == Outcome.Ok && v != null ? v.Value.ToString("F1", Inv) : "-";

    private static string Range(ServerSeries s) => s.Outcome == Outcome.Ok ? s.RangePercent.ToString("F1", Inv) + " %" : "-";

    private static string Ratio(ServerSeries go, ServerSeries ours)
    {
        if (go.Outcome != Outcome.Ok || ours.Outcome != Outcome.Ok || go.MedianMsgPerSec <= 0)
        {
            return "-";
        }

        double x = ours.MedianMsgPerSec / go.MedianMsgPerSec;
        var text = x.ToString("F2", Inv) + "x";
        return x >= 1.0 ? $"**{text}**" : text;
    }

    private static string Size(int bytes) => bytes >= 1024 && bytes % 1024 == 0 ? $"{bytes / 1024} KiB" : $"{bytes} B";
}
