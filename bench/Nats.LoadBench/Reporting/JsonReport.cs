using System.Text.Json;
using Nats.LoadBench.Running;

namespace Nats.LoadBench.Reporting;

/// <summary>Raw figures, every round, for anyone who wants to recompute the table.</summary>
internal static class JsonReport
{
    public static void Write(string path, IReadOnlyList<RowResult> rows, MachineInfo machine, BenchOptions o, DateTimeOffset when)
    {
        using var stream = File.Create(path);
        using var w = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true });
        w.WriteStartObject();
        w.WriteString("date", when.ToString("O"));
        w.WriteString("command", o.Command);
        w.WriteString("mode", o.Smoke ? "smoke" : "full");
        w.WriteNumber("rounds", o.Rounds);
        w.WriteNumber("durationSeconds", o.Duration.TotalSeconds);
        w.WriteNumber("warmupSeconds", o.Warmup.TotalSeconds);
        w.WriteString("mbDefinition", "MB/s = msg/s x payload bytes / 1,000,000 (payload only, decimal megabytes)");
        w.WriteStartObject("machine");
        w.WriteString("cpu", machine.Cpu);
        w.WriteNumber("cores", machine.Cores);
        w.WriteString("memory", machine.Memory);
        w.WriteString("os", machine.Os);
        w.WriteString("dotnet", machine.Dotnet);
        w.WriteString("loadAverage", o.LoadAverages);
        w.WriteString("goServer", machine.GoServer);
        w.WriteString("goCommand", o.Go.ToString());
        w.WriteString("oursCommand", o.Ours.ToString());
        w.WriteEndObject();
        w.WriteStartArray("rows");
        foreach (var r in rows)
        {
            w.WriteStartObject();
            w.WriteString("name", r.Scenario.Name);
            w.WriteString("section", r.Scenario.Section);
            w.WriteString("title", r.Scenario.Title);
            w.WriteNumber("payloadBytes", r.Scenario.PayloadSize);
            Series(w, r.Scenario.IsLimit ? "sink" : "go", r, r.Go);
            if (r.Ours != null)
            {
                Series(w, "ours", r, r.Ours);
                if (r.Go.Outcome == Outcome.Ok && r.Ours.Outcome == Outcome.Ok && r.Go.MedianMsgPerSec > 0)
                {
                    w.WriteNumber("ratioOursToGo", Math.Round(r.Ours.MedianMsgPerSec / r.Go.MedianMsgPerSec, 4));
                }
            }

            w.WriteEndObject();
        }

        w.WriteEndArray();
        w.WriteEndObject();
    }

    private static void Series(Utf8JsonWriter w, string name, RowResult row, ServerSeries s)
    {
        w.WriteStartObject(name);
        w.WriteString("status", s.Outcome switch { Outcome.Ok => "ok", Outcome.NotImplemented => "not implemented", _ => "failed" });
        if (s.Reason != null)
        {
            w.WriteString("reason", s.Reason);
        }

        if (s.Outcome == Outcome.Ok)
        {
            w.WriteNumber("medianMsgPerSec", Math.Round(s.MedianMsgPerSec, 1));
            w.WriteNumber("medianMBPerSec", Math.Round(row.MegabytesPerSec(s), 3));
            w.WriteNumber("minMsgPerSec", Math.Round(s.MinMsgPerSec, 1));
            w.WriteNumber("maxMsgPerSec", Math.Round(s.MaxMsgPerSec, 1));
            if (s.MedianP50 is { } p50)
            {
                w.WriteNumber("medianP50Us", Math.Round(p50, 2));
                w.WriteNumber("medianP99Us", Math.Round(s.MedianP99!.Value, 2));
            }

            if (s.MedianFailoverMs is { } failover)
            {
                w.WriteNumber("medianFailoverMs", Math.Round(failover, 1));
            }
        }

        w.WriteStartArray("rounds");
        foreach (var r in s.Rounds)
        {
            w.WriteStartObject();
            w.WriteString("status", r.Outcome.ToString());
            if (r.Measurement is { } m)
            {
                w.WriteNumber("messages", m.Messages);
                w.WriteNumber("expected", m.Expected);
                w.WriteNumber("seconds", Math.Round(m.Seconds, 6));
                w.WriteNumber("msgPerSec", Math.Round(m.MsgPerSec, 1));
                if (m.P50Us is { } p50)
                {
                    w.WriteNumber("p50Us", Math.Round(p50, 2));
                    w.WriteNumber("p99Us", Math.Round(m.P99Us!.Value, 2));
                }

                if (m.Scale is { } scale)
                {
                    w.WriteNumber("publishMsgPerSec", Math.Round(scale.PublishMsgPerSec, 1));
                    w.WriteNumber("diskMiB", Math.Round(scale.DiskMb, 2));
                    w.WriteNumber("restartSeconds", Math.Round(scale.RestartSeconds, 4));
                    w.WriteNumber("rssAfterRestartMb", Math.Round(scale.RssAfterRestartMb, 2));
                }

                if (m.FailoverMs is { } failoverMs)
                {
                    w.WriteNumber("failoverMs", Math.Round(failoverMs, 1));
                }
            }

            if (r.Reason != null)
            {
                w.WriteString("reason", r.Reason);
            }

            if (r.Memory is { } mem)
            {
                w.WriteNumber("vmHwmKb", mem.PeakKb);
                w.WriteNumber("vmRssKb", mem.ResidentKb);
            }

            w.WriteEndObject();
        }

        w.WriteEndArray();
        w.WriteEndObject();
    }
}
