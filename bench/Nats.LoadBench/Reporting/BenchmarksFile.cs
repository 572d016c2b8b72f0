using System.Text;

namespace Nats.LoadBench.Reporting;

/// <summary>
/// Owns only the region between the loadbench markers of BENCHMARKS.md; text outside it is
/// written by people and is preserved byte for byte.
/// </summary>
internal static class BenchmarksFile
{
    public const string Begin = "<!-- loadbench:begin -->";
    public const string End = "<!-- loadbench:end -->";

    public static void WriteRegion(string path, string body)
    {
        var region = $"{Begin}\n{body.TrimEnd()}\n{End}";
        if (!File.Exists(path))
        {
            File.WriteAllText(path, $"# Benchmarks\n\n{region}\n");
            return;
        }

        var text = File.ReadAllText(path);
        int b = text.IndexOf(Begin, StringComparison.Ordinal);
        int e = text.IndexOf(End, StringComparison.Ordinal);
        if (b >= 0 && e > b)
        {
            text = text[..b] + region + text[(e + End.Length)..];
        }
        else
        {
            text = text.TrimEnd() + "\n\n" + region + "\n";
        }

        File.WriteAllText(path, text);
    }

    public static string Body(string tables, MachineInfo m, BenchOptions o, DateTimeOffset when, string? jsonPath)
    {
        var sb = new StringBuilder();
        sb.AppendLine("## End-to-end comparison: Go nats-server vs ours (generated)").AppendLine();
        sb.AppendLine("_This section is rewritten by `bash scripts/bench.sh`; edit the harness, not the figures._").AppendLine();
        sb.AppendLine($"- **Date:** {when:yyyy-MM-dd HH:mm} UTC");
        sb.AppendLine($"- **Machine:** {m.Cpu}, {m.Cores} cores, {m.Memory} RAM, {m.Os}");
        sb.AppendLine($"- **Load average (1/5/15 min):** {o.LoadAverages} (other work on the machine widens the ranges)");
        sb.AppendLine($"- **Runtimes:** {m.Dotnet}; Go server: {m.GoServer}");
        sb.AppendLine($"- **Servers:** Go = `{o.Go}`, ours = `{o.Ours}`; both on 127.0.0.1 with the same config file per row");
        sb.AppendLine($"- **Command:** `{o.Command}`");
        var timing = o.Smoke
            ? "smoke mode: a fixed message count per row, no warm-up (figures are not meaningful, only the counts)"
            : $"{o.Warmup.TotalSeconds:0.##} s warm-up then {o.Duration.TotalSeconds:0.##} s measured on that process";
        sb.AppendLine($"- **Method:** {o.Rounds} round(s) per row, Go and ours alternating (Go, ours; ours, Go; Go, ours; ...: each round swaps who goes first, so steady drift cancels), " +
            $"a fresh server process per measurement, {timing}. Figures are the median round; \"range\" is (max - min) / median across rounds.");
        sb.AppendLine("- **Units:** msg/s counts messages received by all subscribers (published messages for pub-only rows); " +
            "MB/s = msg/s x payload bytes / 1,000,000 (payload only, decimal MB). Latency is the round trip of sequential requests, in microseconds. " +
            "RSS is the server process's peak (VmHWM) / remaining (VmRSS) resident memory after the run, highest over the rounds, each round being a fresh process.");
        sb.AppendLine("- **Clients:** subscribers, requesters and services are NATS.Net 3.3.2 (NATS.Client.Core from NuGet); publishers of the throughput rows write pre-encoded PUB frames " +
            "from a raw socket, 64 KiB per write, because NATS.Net's PublishAsync loop (~1M msg/s of 16 B here) is far slower than nats.go (6-9M), and a fast publisher is what users run. " +
            "Nothing paces publishers to subscribers: a run where any message is lost, any connection is cut or the server logs a slow consumer is FAILED, for either server. " +
            "The machine-limit rows send the raw publisher's load into a loopback sink that discards bytes.");
        if (jsonPath != null)
        {
            sb.AppendLine($"- **Raw figures:** `{jsonPath}`");
        }

        sb.AppendLine().Append(tables);
        return sb.ToString();
    }
}
