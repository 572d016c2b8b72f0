namespace Nats.LoadBench.Servers;

/// <summary>A server process's memory after a run, from /proc/PID/status: peak (VmHWM) and current (VmRSS) resident set.</summary>
internal sealed record ServerMemory(long PeakKb, long ResidentKb)
{
    public double PeakMb => PeakKb / 1024.0;

    public double ResidentMb => ResidentKb / 1024.0;

    public static ServerMemory? Read(int pid)
    {
        string text;
        try
        {
            text = File.ReadAllText($"/proc/{pid}/status");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        long peak = -1, rss = -1;
        foreach (var line in text.Split('\n'))
        {
            if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
            {
                peak = Kb(line);
            }
            else if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                rss = Kb(line);
            }
        }

        return peak < 0 || rss < 0 ? null : new ServerMemory(peak, rss);
    }

    // "VmRSS:	   12345 kB"
    private static long Kb(string line) => long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture);
}
