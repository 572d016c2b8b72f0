using System.Diagnostics;
using System.Text.Json;

namespace Nats.Server.IntegrationTests.Monitoring.Metrics;

/// <summary>One sample of a scrape, as the Prometheus client library's parser read it.</summary>
internal sealed record MetricSample(string Family, string Type, string Name, IReadOnlyDictionary<string, string> Labels, double Value);

/// <summary>Runs the Prometheus text/OpenMetrics parser of Debian's python3-prometheus-client over a scrape.</summary>
internal static class MetricsScrape
{
    private const string Python = "/usr/bin/python3";

    public static async Task<IReadOnlyList<MetricSample>> ParseAsync(string text, bool openMetrics)
    {
        Assert.True(File.Exists(Python), $"{Python} is missing (scripts/test.sh installs python3-prometheus-client)");
        var script = Path.Combine(AppContext.BaseDirectory, "Monitoring", "Metrics", "parse_metrics.py");
        var start = new ProcessStartInfo(Python)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.ArgumentList.Add(script);
        start.ArgumentList.Add(openMetrics ? "openmetrics" : "prometheus");
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await process.StandardInput.WriteAsync(text);
        process.StandardInput.Close();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        Assert.True(process.ExitCode == 0, $"the Prometheus parser rejected the scrape: {await stderr}\n{text}");
        using var document = JsonDocument.Parse(await stdout);
        return document.RootElement.EnumerateArray().Select(s => new MetricSample(
            s.GetProperty("family").GetString()!,
            s.GetProperty("type").GetString()!,
            s.GetProperty("name").GetString()!,
            s.GetProperty("labels").EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString()!),
            s.GetProperty("value").GetDouble())).ToList();
    }
}
