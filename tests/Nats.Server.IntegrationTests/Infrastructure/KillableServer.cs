using System.Diagnostics;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// A real server executable (ours or Go's) in a child process with JetStream on a given store directory,
/// so a test can kill -9 it and start it again on the same directory. Ours is
/// <see cref="TestServers.ExecutableVariable"/> when set (CI points it at the Native AOT build), else this
/// build's nats-net-server.dll under <c>dotnet</c>.
/// </summary>
internal sealed partial class KillableServer : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(90);

    private readonly Process _process;

    private KillableServer(Process process, LogLines log, int port)
    {
        _process = process;
        Log = log;
        Port = port;
        MonitorPort = PortIn(MonitorLine(), log.Text);
        MqttPort = PortIn(MqttLine(), log.Text);
    }

    /// <summary>The HTTP monitoring port when started with "-m -1" (0 otherwise).</summary>
    public int MonitorPort { get; }

    /// <summary>The MQTT port when the configuration enables MQTT (0 otherwise).</summary>
    public int MqttPort { get; }

    public LogLines Log { get; }

    public int Port { get; }

    public string Url => $"nats://127.0.0.1:{Port}";

    /// <summary>Starts the server with <c>-js -sd <paramref name="storeDir"/></c> on a free client port and waits until it is ready.</summary>
    public static async Task<KillableServer> StartAsync(bool go, string storeDir, params string[] extra)
    {
        var psi = go ? new ProcessStartInfo(GoServerProcess.BinaryPath) : OursStartInfo();
        foreach (var a in (string[])["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", "-1", .. extra])
        {
            psi.ArgumentList.Add(a);
        }
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        var log = new LogLines();
        var process = new Process { StartInfo = psi };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        try
        {
            var (line, _) = await log.WaitForAsync(l => ListeningLine().IsMatch(l), timeout: StartTimeout);
            await log.WaitForAsync("Server is ready", timeout: StartTimeout);
            return new KillableServer(process, log, int.Parse(ListeningLine().Match(line).Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
        }
        catch
        {
            process.Kill();
            await process.WaitForExitAsync();
            process.Dispose();
            throw;
        }
    }

    /// <summary>How to run our server: the executable named by <see cref="TestServers.ExecutableVariable"/>, else
    /// <c>dotnet nats-net-server.dll</c> of the configuration these tests were built in.</summary>
    public static ProcessStartInfo OursStartInfo()
    {
        if (TestServers.Executable is { } executable)
        {
            return new ProcessStartInfo(executable);
        }
        var testDir = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        var dll = Path.Combine(RepoPaths.Root, "src", "Nats.Server.App", "bin", testDir.Parent!.Name, testDir.Name, "nats-net-server.dll");
        Assert.True(File.Exists(dll), $"{dll} is missing: build src/Nats.Server.App");
        return new ProcessStartInfo("dotnet") { ArgumentList = { dll } };
    }

    /// <summary>SIGKILL now, without waiting (from any thread, e.g. the moment an ack arrived).</summary>
    public void Kill()
    {
        try
        {
            _process.Kill();
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }
    }

    /// <summary>SIGKILL, and wait until the process is gone (its files closed).</summary>
    public async Task KillAsync()
    {
        Kill();
        await _process.WaitForExitAsync();
    }

    public async ValueTask DisposeAsync()
    {
        await KillAsync();
        _process.Dispose();
    }

    private static int PortIn(Regex line, string log)
    {
        var match = line.Match(log);
        return match.Success ? int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) : 0;
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ListeningLine();

    [GeneratedRegex(@"Starting http monitor on [^\s]+:(\d+)")]
    private static partial Regex MonitorLine();

    [GeneratedRegex(@"Listening for MQTT clients on (?:mqtt|tls)://[^\s]+:(\d+)")]
    private static partial Regex MqttLine();
}
