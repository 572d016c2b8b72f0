using System.Diagnostics;

namespace Nats.Server.Monitoring;

/// <summary>
/// Resident memory and CPU percentage for /varz "mem" and "cpu". CPU is the share of one core used
/// since the previous sample (at least a second apart), like the Go server's pse sampler.
/// </summary>
internal sealed class ProcessUsage
{
    private readonly Lock _lock = new();
    private TimeSpan _lastCpu;
    private long _lastSampleTimestamp;
    private double _cpuPercent;

    public (long Rss, double CpuPercent) Sample()
    {
        using var process = Process.GetCurrentProcess();
        var rss = process.WorkingSet64;
        var cpu = process.TotalProcessorTime;
        lock (_lock)
        {
            var now = Stopwatch.GetTimestamp();
            if (_lastSampleTimestamp == 0)
            {
                var sinceStart = DateTime.Now - process.StartTime;
                _cpuPercent = sinceStart > TimeSpan.Zero ? Percent(cpu, sinceStart) : 0;
                _lastSampleTimestamp = now;
                _lastCpu = cpu;
            }
            else
            {
                var elapsed = Stopwatch.GetElapsedTime(_lastSampleTimestamp, now);
                if (elapsed >= TimeSpan.FromSeconds(1))
                {
                    _cpuPercent = Percent(cpu - _lastCpu, elapsed);
                    _lastSampleTimestamp = now;
                    _lastCpu = cpu;
                }
            }
            return (rss, _cpuPercent);
        }
    }

    // Go reports one decimal place.
    private static double Percent(TimeSpan used, TimeSpan elapsed) => Math.Round(used.TotalSeconds / elapsed.TotalSeconds * 100, 1);
}
