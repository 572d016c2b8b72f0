using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// Debian's Go nats-server as a child process. It binds a random port itself (-p -1) and the port is read
/// from its "Listening for client connections" log line, so there is no window where another process can
/// take a port we picked; readiness is its "Server is ready" line, not a timer.
/// </summary>
internal sealed partial class GoServerProcess : ITestServer
{
    public const string BinaryPath = "/usr/sbin/nats-server";

    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(20);

    private readonly Process _process;
    private readonly string _tempDir;
    private readonly StringBuilder _log;

    private GoServerProcess(Process process, string tempDir, int port, StringBuilder log, string kind)
    {
        Kind = kind;
        _process = process;
        _tempDir = tempDir;
        Port = port;
        // The live log: lines keep arriving after startup (the TLS tests wait for Go's error lines).
        _log = log;
    }

    public string Kind { get; }

    public int Port { get; }

    public string Log
    {
        get
        {
            lock (_log)
            {
                return _log.ToString();
            }
        }
    }

    public static Task<GoServerProcess> StartAsync(ServerSettings settings) => StartAsync(settings, BinaryPath, "go");

    /// <summary>Another executable that takes nats-server's flags and configuration (ours, published), started the same way.</summary>
    public static async Task<GoServerProcess> StartAsync(ServerSettings settings, string binaryPath, string kind)
    {
        if (!File.Exists(binaryPath))
        {
            throw new InvalidOperationException(kind == "go"
                ? $"The Go reference server {BinaryPath} is missing; install Debian's nats-server package (2.9.10). Differential tests cannot run without it."
                : $"{binaryPath} is missing (named by {TestServers.ExecutableVariable}).");
        }

        var tempDir = Directory.CreateTempSubdirectory("nats-diff-go-").FullName;
        var args = new List<string> { "-a", "127.0.0.1", "-p", "-1" };
        if (settings.JetStream)
        {
            args.AddRange(["-js", "-sd", settings.StoreDir ?? Path.Combine(tempDir, "js")]);
        }
        var config = settings.ToGoConfig();
        if (config.Length > 0)
        {
            var configPath = Path.Combine(tempDir, "server.conf");
            await File.WriteAllTextAsync(configPath, config);
            args.Add("-c");
            args.Add(configPath);
        }

        var psi = new ProcessStartInfo(binaryPath)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
            WorkingDirectory = tempDir,
        };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }

        var process = new Process { StartInfo = psi, EnableRaisingEvents = true };
        var log = new StringBuilder();
        var port = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var listening = 0;

        void OnLine(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (log)
            {
                log.AppendLine(line);
            }

            var m = ListeningLine().Match(line);
            if (m.Success)
            {
                listening = int.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (line.Contains("Server is ready", StringComparison.Ordinal) && listening > 0)
            {
                port.TrySetResult(listening);
            }
        }

        process.ErrorDataReceived += (_, e) => OnLine(e.Data);
        process.OutputDataReceived += (_, e) => OnLine(e.Data);
        process.Exited += (_, _) => port.TrySetException(new InvalidOperationException(
            $"{binaryPath} exited with code {process.ExitCode} before it was ready. Log:\n{Snapshot(log)}"));
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();

        try
        {
            var bound = await port.Task.WaitAsync(StartTimeout);
            return new GoServerProcess(process, tempDir, bound, log, kind);
        }
        catch
        {
            KillQuietly(process);
            TryDelete(tempDir);
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Kind != "go" && !_process.HasExited)
        {
            // Ours stops as the in-process server's dispose does, cleanly (SIGINT), so tests that restart on the
            // same store see a clean shutdown; after a kill -9 the store resumes above its sequence reservation.
            using var interrupt = Process.Start("kill", ["-INT", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            await interrupt.WaitForExitAsync();
            try
            {
                await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
            }
            catch (TimeoutException)
            {
                // Killed below.
            }
        }
        KillQuietly(_process);
        await _process.WaitForExitAsync();
        _process.Dispose();
        TryDelete(_tempDir);
    }

    private static string Snapshot(StringBuilder log)
    {
        lock (log)
        {
            return log.ToString();
        }
    }

    private static void KillQuietly(Process p)
    {
        try
        {
            if (!p.HasExited)
            {
                p.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone: nothing to stop.
        }
    }

    private static void TryDelete(string dir)
    {
        try
        {
            Directory.Delete(dir, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ListeningLine();
}
