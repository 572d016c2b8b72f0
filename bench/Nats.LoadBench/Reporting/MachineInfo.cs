using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Nats.LoadBench.Reporting;

/// <summary>What the figures were measured on; printed with every table.</summary>
internal sealed record MachineInfo(string Cpu, int Cores, string Memory, string Os, string Dotnet, string GoServer, string OursServer)
{
    public static MachineInfo Collect(string goCmd, string oursCmd) => new(
        CpuModel(),
        Environment.ProcessorCount,
        MemTotal(),
        RuntimeInformation.OSDescription,
        RuntimeInformation.FrameworkDescription,
        VersionOf(goCmd),
        oursCmd);

    /// <summary>1/5/15-minute load averages: on a shared machine they say how much to trust the figures.</summary>
    public static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "unknown";
        }
    }

    private static string CpuModel()
    {
        try
        {
            var line = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal));
            return line?.Split(':', 2)[1].Trim() ?? RuntimeInformation.ProcessArchitecture.ToString();
        }
        catch (IOException)
        {
            return RuntimeInformation.ProcessArchitecture.ToString();
        }
    }

    private static string MemTotal()
    {
        try
        {
            var line = File.ReadLines("/proc/meminfo").FirstOrDefault(l => l.StartsWith("MemTotal:", StringComparison.Ordinal));
            if (line != null && long.TryParse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], out var kb))
            {
                return $"{kb / 1024.0 / 1024.0:F1} GiB";
            }
        }
        catch (IOException)
        {
        }

        return "unknown";
    }

    private static string VersionOf(string command)
    {
        try
        {
            var parts = command.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            var psi = new ProcessStartInfo(parts[0]) { RedirectStandardOutput = true, RedirectStandardError = true };
            foreach (var p in parts[1..])
            {
                psi.ArgumentList.Add(p);
            }

            psi.ArgumentList.Add("--version");
            using var proc = Process.Start(psi)!;
            var output = proc.StandardOutput.ReadToEnd() + proc.StandardError.ReadToEnd();
            proc.WaitForExit(5000);
            return output.Trim().Split('\n')[0];
        }
        catch (Exception ex) when (ex is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            return "unknown (" + command + ")";
        }
    }
}
