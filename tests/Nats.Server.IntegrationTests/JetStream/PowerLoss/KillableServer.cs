using System.Diagnostics;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.JetStream.PowerLoss;

/// <summary>A real server executable (ours or Go's) with JetStream on a given store directory, for kill -9.</summary>
internal sealed partial class KillableServer : IAsyncDisposable
{
    private readonly Process _process;

    private KillableServer(Process process, LogLines log, int port, int monitorPort)
    {
        _process = process;
        Log = log;
        Port = port;
        MonitorPort = monitorPort;
    }

    /// <summary>The HTTP monitoring port when started with "-m -1" (0 otherwise).</summary>
    public int MonitorPort { get; }

    public LogLines Log { get; }

    public int Port { get; }

    public string Url => $"nats://127.0.0.1:{Port}";

    public static async Task<KillableServer> StartAsync(bool go, string storeDir, params string[] extra)
    {
        ProcessStartInfo psi;
        if (go)
        {
            psi = new ProcessStartInfo(GoServerProcess.BinaryPath);
        }
        else
        {
            var testDir = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
            var dll = Path.Combine(RepoPaths.Root, "src", "Nats.Server.App", "bin", testDir.Parent!.Name, testDir.Name, "nats-net-server.dll");
            Assert.True(File.Exists(dll), $"{dll} is missing: build src/Nats.Server.App");
            psi = new ProcessStartInfo("dotnet") { ArgumentList = { dll } };
        }
        foreach (var a in (string[])["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", "-1", .. extra])
        {
            psi.ArgumentList.Add(a);
        }
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        var log = new LogLines();
        var process = new Process { StartInfo = psi };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) log.Add(e.Data); };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) log.Add(e.Data); };
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        try
        {
            var (line, _) = await log.WaitForAsync(l => ListeningLine().IsMatch(l), timeout: TimeSpan.FromSeconds(90));
            await log.WaitForAsync("Server is ready", timeout: TimeSpan.FromSeconds(90));
            var monitor = MonitorLine().Match(log.Text);
            return new KillableServer(process, log, int.Parse(ListeningLine().Match(line).Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture),
                monitor.Success ? int.Parse(monitor.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) : 0);
        }
        catch
        {
            process.Kill();
            await process.WaitForExitAsync();
            throw;
        }
    }

    /// <summary>SIGKILL, and wait until the process is gone (its files closed).</summary>
    public async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
        }
        await _process.WaitForExitAsync();
    }

    public async ValueTask DisposeAsync()
    {
        await KillAsync();
        _process.Dispose();
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ListeningLine();

    [GeneratedRegex(@"Starting http monitor on [^\s]+:(\d+)")]
    private static partial Regex MonitorLine();
}
