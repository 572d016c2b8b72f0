using System.Diagnostics;

namespace Nats.Server.Monitoring;

/// <summary>
/// Resident memory and CPU percentage for /varz "mem" and "cpu". Like the Go server's pse sampler,
/// values are refreshed at most once a second (reading /proc costs more than the rest of /varz),
/// and CPU is the share of one core used since the previous refresh.
/// </summary>
internal sealed class ProcessUsage
{
    private static readonly TimeSpan RefreshInterval = TimeSpan.FromSeconds(1);

    private readonly Lock _lock = new();
    private TimeSpan _lastCpu;
    private long _lastSampleTimestamp;
    private long _rss;
    private double _cpuPercent;

    public (long Rss, double CpuPercent) Sample()
    {
        lock (_lock)
        {
            var now = Stopwatch.GetTimestamp();
            if (_lastSampleTimestamp != 0 && Stopwatch.GetElapsedTime(_lastSampleTimestamp, now) < RefreshInterval)
            {
                return (_rss, _cpuPercent);
            }
            using var process = Process.GetCurrentProcess();
            var cpu = process.TotalProcessorTime;
            if (_lastSampleTimestamp == 0)
            {
                var sinceStart = DateTime.Now - process.StartTime;
                _cpuPercent = sinceStart > TimeSpan.Zero ? Percent(cpu, sinceStart) : 0;
            }
            else
            {
                _cpuPercent = Percent(cpu - _lastCpu, Stopwatch.GetElapsedTime(_lastSampleTimestamp, now));
            }
            _rss = Hosting.ResidentMemory.Bytes();
            _lastCpu = cpu;
            _lastSampleTimestamp = now;
            return (_rss, _cpuPercent);
        }
    }

    // Go reports one decimal place.
    private static double Percent(TimeSpan used, TimeSpan elapsed) => Math.Round(used.TotalSeconds / elapsed.TotalSeconds * 100, 1);
}
