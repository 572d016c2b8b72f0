using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Nats.LoadBench.Client;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.LoadBench.Servers;

/// <summary>
/// One server process on free loopback ports, with a config file holding the feature blocks
/// (identical text for Go and ours, except a row's ours-only JetStream options). Stopped through its own process handle only.
/// </summary>
internal sealed class ServerProcess : IDisposable
{
    private Process _process;
    private readonly string _dir;
    private ProcessStartInfo? _startInfo;
    private readonly StringBuilder _log = new();
    private volatile string? _slowConsumerLine;

    private ServerProcess(Process process, string dir, Endpoint endpoint)
    {
        _process = process;
        _dir = dir;
        Endpoint = endpoint;
    }

    public Endpoint Endpoint { get; internal set; }

    /// <summary>The other servers of a cluster row (<see cref="ClusterStart"/>); they live and die with this one.</summary>
    internal List<ServerProcess> Peers { get; } = [];

    /// <param name="serverName">The <c>server_name</c> written with a JetStream or MQTT block; null when <paramref name="extraConfig"/>
    /// names the server itself (cluster rows).</param>
    public static ServerProcess Start(ServerSpec spec, Features features, string? extraConfig = null, string? jetStreamConfig = null, int startTimeoutMs = 20_000,
        string? serverName = "loadbench")
    {
        var dir = Path.Combine(Path.GetTempPath(), "loadbench-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(dir);
        int port = FreePorts.Next();
        int mqttPort = features.HasFlag(Features.Mqtt) ? FreePorts.Next() : 0;
        int wsPort = features.HasFlag(Features.WebSocket) ? FreePorts.Next() : 0;
        var args = new List<string>(spec.Args) { "-a", "127.0.0.1", "-p", port.ToString() };
        if (features != Features.None || extraConfig != null)
        {
            var conf = Path.Combine(dir, "server.conf");
            File.WriteAllText(conf, ConfigText(features, dir, mqttPort, wsPort, jetStreamConfig, serverName) + extraConfig);
            args.Add("-c");
            args.Add(conf);
        }

        var psi = new ProcessStartInfo(spec.FileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = dir,
        };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }

        Process process;
        try
        {
            process = Process.Start(psi) ?? throw new SetupException($"could not start {spec.FileName}");
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            TryDelete(dir);
            throw new SetupException($"could not start {spec.FileName}: {ex.Message}", ex);
        }

        var server = new ServerProcess(process, dir, new Endpoint("127.0.0.1", port, mqttPort, wsPort, features.HasFlag(Features.Tls)) { Ours = spec.IsOurs });
        server._startInfo = psi;
        server.Attach(process);
        try
        {
            server.WaitForPort(port, startTimeoutMs);
            if (mqttPort != 0)
            {
                server.WaitForPort(mqttPort, 3_000);
            }

            if (wsPort != 0)
            {
                server.WaitForPort(wsPort, 3_000);
            }
        }
        catch
        {
            server.Dispose();
            throw;
        }

        return server;
    }

    private void Attach(Process process)
    {
        process.OutputDataReceived += (_, e) => Capture(e.Data);
        process.ErrorDataReceived += (_, e) => Capture(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    /// <summary>Stops the server as an operator does (SIGTERM: Go and ours shut down cleanly, stores
    /// written out) and waits for it to exit; the directory and its store stay.</summary>
    public async Task StopCleanlyAsync(TimeSpan timeout)
    {
        using (var kill = Process.Start(new ProcessStartInfo("kill") { ArgumentList = { "-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture) }, UseShellExecute = false }))
        {
            await kill!.WaitForExitAsync();
        }

        using var wait = new CancellationTokenSource(timeout);
        await _process.WaitForExitAsync(wait.Token);
    }

    /// <summary>Starts the server again with its config and store on a new port (the old one may linger
    /// in TIME_WAIT); returns at once, without waiting for the listener (scale rows time the restart).</summary>
    public void StartAgain()
    {
        var psi = _startInfo ?? throw new InvalidOperationException("not started by Start");
        int port = FreePorts.Next();
        var args = psi.ArgumentList.ToList();
        int p = args.IndexOf("-p");
        args[p + 1] = port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        psi.ArgumentList.Clear();
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }

        _process.Dispose();
        _process = Process.Start(psi) ?? throw new SetupException($"could not start {psi.FileName} again");
        Attach(_process);
        Endpoint = Endpoint with { Port = port };
    }

    /// <summary>Bytes of every file under the server's JetStream store directory.</summary>
    public long StoreBytes()
    {
        var store = Path.Combine(_dir, "jetstream");
        return Directory.Exists(store) ? new DirectoryInfo(store).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length) : 0;
    }

    private static string ConfigText(Features f, string dir, int mqttPort, int wsPort, string? jetStreamConfig, string? serverName)
    {
        var sb = new StringBuilder();
        if (f.HasFlag(Features.JetStream) || f.HasFlag(Features.Mqtt))
        {
            // Go's MQTT requires JetStream and a server name.
            if (serverName != null)
            {
                sb.AppendLine($"server_name: {serverName}");
            }

            var store = Path.Combine(dir, "jetstream").Replace("\\", "/");
            sb.AppendLine($"jetstream {{\n  store_dir: \"{store}\"\n  max_memory_store: 2147483648\n  max_file_store: 17179869184\n{jetStreamConfig}}}");
        }

        if (f.HasFlag(Features.Mqtt))
        {
            sb.AppendLine($"mqtt {{\n  host: 127.0.0.1\n  port: {mqttPort}\n}}");
        }

        if (f.HasFlag(Features.WebSocket))
        {
            sb.AppendLine($"websocket {{\n  host: 127.0.0.1\n  port: {wsPort}\n  no_tls: true\n}}");
        }

        if (f.HasFlag(Features.Tls))
        {
            var (cert, key) = SelfSignedCert.Write(dir);
            sb.AppendLine($"tls {{\n  cert_file: \"{cert}\"\n  key_file: \"{key}\"\n}}");
        }

        return sb.ToString();
    }

    private void Capture(string? line)
    {
        if (line == null)
        {
            return;
        }

        // Kept apart from the capped log: a cut late in a long run must still be reported.
        if (_slowConsumerLine == null && line.Contains("Slow Consumer", StringComparison.OrdinalIgnoreCase))
        {
            _slowConsumerLine = line;
        }

        lock (_log)
        {
            if (_log.Length < 64 * 1024)
            {
                _log.AppendLine(line);
            }
        }
    }

    public string LogTail()
    {
        lock (_log)
        {
            var s = _log.ToString();
            return s.Length > 2000 ? s[^2000..] : s;
        }
    }

    private void WaitForPort(int port, int timeoutMs)
    {
        var deadline = Environment.TickCount64 + timeoutMs;
        while (true)
        {
            if (_process.HasExited)
            {
                throw new SetupException($"server exited with code {_process.ExitCode} before listening on {port}: {LogTail().Trim()}");
            }

            using (var s = new Socket(SocketType.Stream, ProtocolType.Tcp))
            {
                try
                {
                    s.Connect("127.0.0.1", port);
                    return;
                }
                catch (SocketException)
                {
                }
            }

            if (Environment.TickCount64 > deadline)
            {
                throw new SetupException($"server did not listen on {port} within {timeoutMs} ms");
            }

            // Polling is confined to startup; the process gives no readiness event we can share across both servers.
            Thread.Sleep(25);
        }
    }

    public bool HasExited => (_process.HasExited && !Killed) || Peers.Any(p => p.HasExited);

    /// <summary>kill -9 of cluster server <paramref name="index"/> (0: this one), as a crash: the failover rows.</summary>
    public void Kill(int index)
    {
        var target = index == 0 ? this : Peers[index - 1];
        target.Killed = true;
        target._process.Kill(entireProcessTree: true);
        target._process.WaitForExit(10_000);
    }

    /// <summary>Killed on purpose by the row (<see cref="Kill"/>), so its exit is no failure.</summary>
    public bool Killed { get; private set; }

    /// <summary>The server's (or a cluster peer's) first log line about a slow consumer, if it logged one.</summary>
    public string? SlowConsumerLine => _slowConsumerLine ?? Peers.Select(p => p.SlowConsumerLine).FirstOrDefault(l => l != null);

    /// <summary>Peak and current resident memory of the server process, read while it still runs.</summary>
    public ServerMemory? Memory() => _process.HasExited ? null : ServerMemory.Read(_process.Id);

    /// <summary>
    /// CPU time (user + system) the server process has used so far, from /proc/PID/stat, summed over a
    /// cluster's servers; null if unreadable. Per message it is a cost figure that survives a busy machine better than msg/s.
    /// </summary>
    public double? CpuSeconds()
    {
        double? total = OwnCpuSeconds();
        foreach (var peer in Peers)
        {
            total += peer.OwnCpuSeconds();
        }

        return total;
    }

    /// <summary>The same per server (this one first), for the log line of a cluster, gateway or leaf row.</summary>
    public double?[] CpuSecondsEach() => [OwnCpuSeconds(), .. Peers.Select(p => p.OwnCpuSeconds())];

    private double? OwnCpuSeconds()
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{_process.Id}/stat");
            // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            var ticks = long.Parse(fields[11], System.Globalization.CultureInfo.InvariantCulture) + long.Parse(fields[12], System.Globalization.CultureInfo.InvariantCulture);
            return ticks / 100.0;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    public void Dispose()
    {
        foreach (var peer in Peers)
        {
            peer.Dispose();
        }

        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }

            _process.WaitForExit(10_000);
        }
        catch (InvalidOperationException)
        {
        }

        _process.Dispose();
        TryDelete(_dir);
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
        catch (UnauthorizedAccessException)
        {
        }
    }
}
