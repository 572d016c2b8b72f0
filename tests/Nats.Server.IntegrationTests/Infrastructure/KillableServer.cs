using System.Diagnostics;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// The real executable in a child process with JetStream on a given store directory, so a test can
/// kill -9 it (<see cref="Process.Kill()"/>) and start it again on the same directory.
/// </summary>
internal static partial class KillableServer
{
    /// <summary>Starts <c>nats-net-server -js -sd <paramref name="storeDir"/></c> on a free client port; its log lines go to <paramref name="log"/>.</summary>
    public static Process Start(LogLines log, string storeDir, params string[] extraArgs)
    {
        var testDir = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        var dll = Path.Combine(RepoPaths.Root, "src", "Nats.Server.App", "bin", testDir.Parent!.Name, testDir.Name, "nats-net-server.dll");
        Assert.True(File.Exists(dll), $"{dll} is missing: build src/Nats.Server.App");
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        foreach (var arg in (string[])[dll, .. extraArgs, "-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", "-1"])
        {
            psi.ArgumentList.Add(arg);
        }
        var process = new Process { StartInfo = psi };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) log.Add(e.Data); };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) log.Add(e.Data); };
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        return process;
    }

    /// <summary>The client port, once the server logged that it is ready.</summary>
    public static Task<int> PortAsync(LogLines log) => PortAsync(log, ClientListening());

    /// <summary>The MQTT port, once the server logged that it is ready.</summary>
    public static Task<int> MqttPortAsync(LogLines log) => PortAsync(log, MqttListening());

    private static async Task<int> PortAsync(LogLines log, Regex listening)
    {
        var (line, _) = await log.WaitForAsync(listening.IsMatch, timeout: TimeSpan.FromSeconds(60));
        await log.WaitForAsync(l => l.Contains("Server is ready", StringComparison.Ordinal), timeout: TimeSpan.FromSeconds(60));
        return int.Parse(listening.Match(line).Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ClientListening();

    [GeneratedRegex(@"Listening for MQTT clients on (?:mqtt|tls)://[^\s]+:(\d+)")]
    private static partial Regex MqttListening();
}
