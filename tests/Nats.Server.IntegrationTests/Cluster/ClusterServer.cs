using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Operations;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// One server of a <see cref="TestCluster"/>: Go's 2.9.10 or ours, always a real process, with its own temp
/// directory (configuration, and a store for JetStream tests) that outlives restarts. Its client and monitor
/// ports stay the same across restarts, so clients reconnect to it; its route port is new each start and
/// hidden behind its <see cref="RouteProxy"/>, the address every peer dials.
/// </summary>
internal sealed partial class ClusterServer : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(90);
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(30) };

    private readonly Func<string> _configText;
    private Process? _process;
    private bool _paused;

    private readonly IReadOnlyList<string> _extraArgs;

    internal ClusterServer(int index, string kind, string tempDir, RouteProxy proxy, Func<string> configText, IReadOnlyList<string> extraArgs)
    {
        _extraArgs = extraArgs;
        Index = index;
        Kind = kind;
        TempDir = tempDir;
        Proxy = proxy;
        _configText = configText;
    }

    public int Index { get; }

    /// <summary>"go" or "ours".</summary>
    public string Kind { get; }

    /// <summary>server_name: A, B, C ...</summary>
    public string Name => ((char)('A' + Index)).ToString();

    public string TempDir { get; }

    /// <summary>Where a JetStream test keeps this server's store (the directory survives restarts).</summary>
    public required string StoreDir { get; init; }

    /// <summary>Environment variables set for the process at each start.</summary>
    public IReadOnlyDictionary<string, string> EnvironmentVariables { get; init; } = new Dictionary<string, string>();

    /// <summary>The server has a cluster block (and a route port to wait for).</summary>
    public bool Routed { get; init; } = true;

    public RouteProxy Proxy { get; }

    public int ClientPort { get; private set; }

    public int MonitorPort { get; private set; }

    /// <summary>The port the server itself listens on for routes (peers dial <see cref="RouteProxy.Port"/>).</summary>
    public int RoutePort { get; private set; }

    /// <summary>The server id of the running process (new on every start).</summary>
    public string ServerId { get; private set; } = "";

    public string Url => $"nats://127.0.0.1:{ClientPort}";

    public bool IsRunning => _process is { HasExited: false };

    public int Pid => _process?.Id ?? throw new InvalidOperationException($"server {Name} is not running");

    /// <summary>This run's log (a restart starts a new one; <see cref="PreviousLogs"/> keeps the old).</summary>
    public LogLines Log { get; private set; } = new();

    public List<LogLines> PreviousLogs { get; } = [];

    public override string ToString() => $"{Name}({Kind})";

    /// <summary>Starts the process and waits until it is ready; after a restart, on the same client and monitor ports.</summary>
    public async Task StartAsync()
    {
        if (IsRunning)
        {
            throw new InvalidOperationException($"server {this} is already running");
        }
        if (_process is not null)
        {
            PreviousLogs.Add(Log);
            Log = new LogLines();
            _process.Dispose();
            _process = null;
        }
        var configPath = Path.Combine(TempDir, "server.conf");
        await File.WriteAllTextAsync(configPath, _configText());
        var psi = Kind == "go" ? new ProcessStartInfo(GoServerProcess.BinaryPath) : KillableServer.OursStartInfo();
        var clientPort = ClientPort == 0 ? "-1" : ClientPort.ToString(CultureInfo.InvariantCulture);
        var monitorPort = MonitorPort == 0 ? "-1" : MonitorPort.ToString(CultureInfo.InvariantCulture);
        foreach (var a in (string[])["-a", "127.0.0.1", "-p", clientPort, "-m", monitorPort, "-c", configPath, .. _extraArgs])
        {
            psi.ArgumentList.Add(a);
        }
        foreach (var (name, value) in EnvironmentVariables)
        {
            psi.Environment[name] = value;
        }
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        psi.WorkingDirectory = TempDir;
        var log = Log;
        var process = new Process { StartInfo = psi };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        _process = process;
        _paused = false;
        try
        {
            var exited = process.WaitForExitAsync();
            // Go listens for routes only after "Server is ready", ours before it (ours is ready once its explicit routes had
            // their first try): both lines, in any order, and the proxy forwards as soon as the route port is known, since
            // peers that hear of this server by gossip may dial it before it is ready.
            async Task RouteListeningAsync()
            {
                await log.WaitForAsync(l => RouteLine().IsMatch(l), timeout: StartTimeout);
                RoutePort = PortIn(RouteLine(), log.Text);
                Proxy.UpstreamPort = RoutePort;
            }
            var ready = Routed
                ? Task.WhenAll(log.WaitForAsync("Server is ready", timeout: StartTimeout), RouteListeningAsync())
                : (Task)log.WaitForAsync("Server is ready", timeout: StartTimeout);
            if (await Task.WhenAny(ready, exited) == exited)
            {
                throw new InvalidOperationException($"server {this} exited with {process.ExitCode} before it was ready:\n{log.Text}");
            }
            await ready;
            ClientPort = PortIn(ClientLine(), log.Text);
            MonitorPort = PortIn(MonitorLine(), log.Text);
            using var varz = await GetVarzAsync(process, log);
            ServerId = varz.RootElement.GetProperty("server_id").GetString()!;
        }
        catch
        {
            await KillAsync();
            throw;
        }
    }

    /// <summary>
    /// The first /varz after "Server is ready"; when the monitor does not answer, the failure carries the server's log
    /// (a server that exits after its ready line, e.g. on a listener it could not bind, says why there).
    /// </summary>
    private async Task<JsonDocument> GetVarzAsync(Process process, LogLines log)
    {
        try
        {
            return await GetJsonAsync("/varz");
        }
        catch (HttpRequestException e)
        {
            var state = process.HasExited ? $"exited with {process.ExitCode}" : "running";
            throw new InvalidOperationException($"server {this} ({state}) did not answer /varz: {e.Message}\n{log.Text}", e);
        }
    }

    /// <summary>SIGKILL (kill -9), and wait until the process is gone.</summary>
    public async Task KillAsync()
    {
        Proxy.UpstreamPort = 0;
        if (_process is null)
        {
            return;
        }
        try
        {
            _process.Kill();
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }
        await _process.WaitForExitAsync();
        _paused = false;
    }

    /// <summary>SIGINT: the server's own clean shutdown (a hang past 30 s is killed).</summary>
    public async Task StopAsync()
    {
        if (!IsRunning)
        {
            return;
        }
        Resume();
        Proxy.UpstreamPort = 0;
        ProcessSignals.Send(_process!.Id, 2);
        try
        {
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
        }
        catch (TimeoutException)
        {
            await KillAsync();
        }
    }

    /// <summary>SIGSTOP: the process freezes with its sockets open, as a server stuck in a long GC pause or a frozen VM.</summary>
    public void Pause()
    {
        ProcessSignals.Send(Pid, ProcessSignals.Stop);
        _paused = true;
    }

    /// <summary>SIGCONT after <see cref="Pause"/>.</summary>
    public void Resume()
    {
        if (_paused && IsRunning)
        {
            ProcessSignals.Send(Pid, ProcessSignals.Continue);
        }
        _paused = false;
    }

    /// <summary>GET on the monitoring port (/varz, /routez?subs=1 ...).</summary>
    public async Task<JsonDocument> GetJsonAsync(string path, CancellationToken cancellationToken = default)
    {
        using var response = await Http.GetAsync($"http://127.0.0.1:{MonitorPort}{path}", cancellationToken);
        response.EnsureSuccessStatusCode();
        return await response.Content.ReadFromJsonAsync<JsonDocument>(cancellationToken) ?? throw new InvalidDataException($"{path}: empty");
    }

    /// <summary>The server ids this server has a route to now (from /routez).</summary>
    public async Task<HashSet<string>> RoutedPeersAsync(CancellationToken cancellationToken = default)
    {
        using var routez = await GetJsonAsync("/routez", cancellationToken);
        return routez.RootElement.GetProperty("routes").EnumerateArray().Select(r => r.GetProperty("remote_id").GetString()!).ToHashSet();
    }

    /// <summary>The subjects (and "subject queue" for queue interest) this server holds for the route to <paramref name="peer"/>.</summary>
    public async Task<List<string>> RouteSubjectsFromAsync(ClusterServer peer, CancellationToken cancellationToken = default)
    {
        using var routez = await GetJsonAsync("/routez?subs=1", cancellationToken);
        foreach (var route in routez.RootElement.GetProperty("routes").EnumerateArray())
        {
            if (route.GetProperty("remote_id").GetString() == peer.ServerId)
            {
                return route.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array
                    ? list.EnumerateArray().Select(s => s.GetString()!).ToList()
                    : [];
            }
        }
        throw new InvalidOperationException($"{this} has no route to {peer}");
    }

    public async ValueTask DisposeAsync()
    {
        await KillAsync();
        _process?.Dispose();
        await Proxy.DisposeAsync();
        try
        {
            Directory.Delete(TempDir, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private int PortIn(Regex line, string log)
    {
        // The last match: a restarted process appends to a fresh log, but be exact anyway.
        var matches = line.Matches(log);
        if (matches.Count == 0)
        {
            throw new InvalidOperationException($"server {this}: no '{line}' line in its log:\n{log}");
        }
        return int.Parse(matches[^1].Groups[1].Value, CultureInfo.InvariantCulture);
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ClientLine();

    [GeneratedRegex(@"Starting http monitor on [^\s]+:(\d+)")]
    private static partial Regex MonitorLine();

    [GeneratedRegex(@"Listening for route connections on [^\s]+:(\d+)")]
    private static partial Regex RouteLine();
}
