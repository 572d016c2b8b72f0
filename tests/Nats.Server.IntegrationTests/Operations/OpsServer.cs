using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Logging;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// A server started from a configuration file that a test can rewrite and reload, or put into lame duck
/// mode: the Go server as a child process (driven by SIGHUP/SIGUSR2 sent to its own pid), or ours in
/// process (driven by ReloadAsync/EnterLameDuckModeAsync). Both bind 127.0.0.1 on a random port given
/// as command-line flags, which a reload keeps, as it keeps any flag.
/// </summary>
internal abstract partial class OpsServer : IAsyncDisposable
{
    protected OpsServer(string tempDir, LogLines? log = null)
    {
        TempDir = tempDir;
        Log = log ?? new LogLines();
    }

    public abstract string Kind { get; }

    public int Port { get; protected set; }

    /// <summary>The monitoring port, when the configuration has an http listener.</summary>
    public int MonitorPort { get; protected set; }

    public LogLines Log { get; }

    public string TempDir { get; }

    public string ConfigPath => Path.Combine(TempDir, "server.conf");

    public static Task<OpsServer> StartAsync(string kind, string config) =>
        kind == "go" ? GoOps.StartGoAsync(config) : OursOps.StartOursAsync(config);

    /// <summary>Rewrites the configuration file and reloads it; returns null on success or the error the server reported.</summary>
    public async Task<string?> ReloadAsync(string config)
    {
        await File.WriteAllTextAsync(ConfigPath, config);
        return await ReloadCoreAsync();
    }

    protected abstract Task<string?> ReloadCoreAsync();

    /// <summary>Starts lame duck mode and returns without waiting for it to finish.</summary>
    public abstract void StartLameDuckMode();

    /// <summary>Waits until the server has shut down by itself (the end of lame duck mode).</summary>
    public abstract Task WaitForExitAsync(TimeSpan timeout);

    public abstract ValueTask DisposeAsync();

    protected static string NewTempDir() => Directory.CreateTempSubdirectory("nats-ops-").FullName;

    protected static void TryDelete(string dir)
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

    [GeneratedRegex(@"Starting http monitor on [^\s]+:(\d+)")]
    private static partial Regex MonitorLine();

    protected async Task ReadPortsFromLogAsync()
    {
        var (ready, index) = await Log.WaitForAsync("Server is ready");
        for (var i = 0; i <= index; i++)
        {
            var line = (await Log.WaitForAsync(_ => true, i)).Line;
            if (ListeningLine().Match(line) is { Success: true } listening)
            {
                Port = int.Parse(listening.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            }
            if (MonitorLine().Match(line) is { Success: true } monitor)
            {
                MonitorPort = int.Parse(monitor.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            }
        }
        Assert.True(Port > 0, $"no listening line before '{ready}'");
    }

    private sealed partial class GoOps : OpsServer
    {
        private const int Sighup = 1;
        private const int Sigusr2 = 12;
        private readonly Process _process;

        private GoOps(string tempDir, Process process)
            : base(tempDir)
        {
            _process = process;
        }

        public override string Kind => "go";

        public static async Task<OpsServer> StartGoAsync(string config)
        {
            var dir = NewTempDir();
            await File.WriteAllTextAsync(Path.Combine(dir, "server.conf"), config);
            var psi = new ProcessStartInfo(Infrastructure.GoServerProcess.BinaryPath)
            {
                RedirectStandardError = true,
                RedirectStandardOutput = true,
                UseShellExecute = false,
                WorkingDirectory = dir,
            };
            foreach (var arg in new[] { "-c", Path.Combine(dir, "server.conf"), "-a", "127.0.0.1", "-p", "-1" })
            {
                psi.ArgumentList.Add(arg);
            }
            var process = new Process { StartInfo = psi };
            var server = new GoOps(dir, process);
            process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { server.Log.Add(e.Data); } };
            process.OutputDataReceived += (_, e) => { if (e.Data is not null) { server.Log.Add(e.Data); } };
            process.Start();
            process.BeginErrorReadLine();
            process.BeginOutputReadLine();
            try
            {
                await server.ReadPortsFromLogAsync();
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }
            return server;
        }

        protected override async Task<string?> ReloadCoreAsync()
        {
            var from = Log.Count;
            Signal(Sighup);
            var (line, _) = await Log.WaitForAsync(
                l => l.Contains("Reloaded server configuration", StringComparison.Ordinal)
                    || l.Contains("Failed to reload server configuration", StringComparison.Ordinal), from);
            const string failed = "Failed to reload server configuration: ";
            var at = line.IndexOf(failed, StringComparison.Ordinal);
            return at < 0 ? null : line[(at + failed.Length)..];
        }

        public override void StartLameDuckMode() => Signal(Sigusr2);

        public override Task WaitForExitAsync(TimeSpan timeout) => _process.WaitForExitAsync().WaitAsync(timeout);

        public override async ValueTask DisposeAsync()
        {
            try
            {
                if (!_process.HasExited)
                {
                    _process.Kill();
                }
            }
            catch (InvalidOperationException)
            {
                // Never started or already gone.
            }
            try
            {
                await _process.WaitForExitAsync();
            }
            catch (InvalidOperationException)
            {
            }
            _process.Dispose();
            TryDelete(TempDir);
        }

        /// <summary>Signals the process this test started, by its own pid.</summary>
        private void Signal(int signal)
        {
            Assert.True(kill(_process.Id, signal) == 0, $"kill({_process.Id}, {signal}) failed: {Marshal.GetLastPInvokeError()}");
        }

        [DllImport("libc", SetLastError = true)]
        private static extern int kill(int pid, int sig);
    }

    private sealed class OursOps : OpsServer
    {
        private readonly NatsServer _server;
        private readonly ILoggerFactory _loggerFactory;

        private OursOps(string tempDir, NatsServer server, ILoggerFactory loggerFactory, LogLines log)
            : base(tempDir, log)
        {
            _server = server;
            _loggerFactory = loggerFactory;
        }

        public override string Kind => "ours";

        public NatsServer Server => _server;

        public static async Task<OpsServer> StartOursAsync(string config)
        {
            var dir = NewTempDir();
            var path = Path.Combine(dir, "server.conf");
            await File.WriteAllTextAsync(path, config);
            var options = new ServerOptions();
            var result = ConfigLoader.Load(options, path);
            Assert.Empty(result.Errors);
            static void Flags(ServerOptions o)
            {
                o.Host = "127.0.0.1";
                o.Port = 0;
            }
            Flags(options);
            var log = new LogLines();
            var provider = new GoStyleLoggerProvider(new LogLines.Writer(log), LogLevel.Debug);
            var factory = LoggerFactory.Create(b => b.SetMinimumLevel(LogLevel.Trace).AddProvider(provider));
            var server = new NatsServer(options, factory) { CommandLineOverrides = Flags };
            var ops = new OursOps(dir, server, factory, log);
            await server.StartAsync();
            ops.Port = server.Port;
            ops.MonitorPort = server.MonitoringPort;
            return ops;
        }

        protected override async Task<string?> ReloadCoreAsync()
        {
            try
            {
                await _server.ReloadAsync();
                return null;
            }
            catch (ReloadException e)
            {
                return e.Message;
            }
        }

        public override void StartLameDuckMode() => _ = _server.EnterLameDuckModeAsync();

        public override Task WaitForExitAsync(TimeSpan timeout) => _server.Stopped.WaitAsync(timeout);

        public override async ValueTask DisposeAsync()
        {
            await _server.DisposeAsync();
            _loggerFactory.Dispose();
            TryDelete(TempDir);
        }
    }
}
