using System.Diagnostics;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Nats.Server.Configuration;
using Nats.Server.Embedding;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>A server with its monitoring port on, reachable by raw clients and over HTTP.</summary>
internal abstract class MonitoredServer : IAsyncDisposable
{
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(30) };

    public abstract string Kind { get; }
    public abstract int ClientPort { get; }
    public abstract int MonitorPort { get; }

    private static readonly string[] CountedPaths =
        ["/", "/varz", "/connz", "/subsz", "/routez", "/gatewayz", "/leafz", "/accountz", "/accstatz", "/jsz", "/healthz"];

    /// <summary>What this test asked for, counted the way the Go server fills /varz http_req_stats.</summary>
    public SortedDictionary<string, long> RequestsMade { get; } = new(StringComparer.Ordinal);

    public async Task<HttpResponse> GetAsync(string pathAndQuery)
    {
        using var response = await _http.GetAsync($"http://127.0.0.1:{MonitorPort}{pathAndQuery}");
        var body = await response.Content.ReadAsStringAsync();
        var path = pathAndQuery.Split('?')[0];
        path = path == "/subscriptionsz" ? "/subsz" : path;
        // Go counts /connz and /routez only after their parameters decode.
        var counted = CountedPaths.Contains(path)
            && !(path is "/connz" or "/routez" && response.StatusCode == HttpStatusCode.BadRequest && body.StartsWith("Error decoding", StringComparison.Ordinal));
        if (counted)
        {
            RequestsMade[path] = RequestsMade.GetValueOrDefault(path) + 1;
        }
        return new HttpResponse(response.StatusCode, response.Content.Headers.ContentType?.ToString() ?? "", body);
    }

    /// <summary>GETs a JSON document and fails the test unless the server answered 200 with JSON.</summary>
    public async Task<JsonElement> GetJsonAsync(string pathAndQuery)
    {
        var response = await GetAsync(pathAndQuery);
        Assert.True(response.Status == HttpStatusCode.OK, $"{Kind} {pathAndQuery}: {(int)response.Status} {response.Body}");
        Assert.StartsWith("application/json", response.ContentType);
        using var document = JsonDocument.Parse(response.Body);
        return document.RootElement.Clone();
    }

    /// <summary>Polls a JSON document until it satisfies a condition: the server records some things asynchronously (Go saves closed connections on a goroutine).</summary>
    public async Task<JsonElement> WaitForJsonAsync(string pathAndQuery, Func<JsonElement, bool> condition)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            var json = await GetJsonAsync(pathAndQuery);
            if (condition(json))
            {
                return json;
            }
            if (deadline.Elapsed > TimeSpan.FromSeconds(20))
            {
                Assert.Fail($"{Kind} {pathAndQuery} never reached the expected state: {json}");
            }
            await Task.Yield();
        }
    }

    public virtual ValueTask DisposeAsync()
    {
        _http.Dispose();
        return ValueTask.CompletedTask;
    }
}

internal sealed record HttpResponse(HttpStatusCode Status, string ContentType, string Body);

/// <summary>Our server in-process (the public embedding API) with HttpPort -1 (a free port, like Go's -m -1).</summary>
internal sealed class OurMonitoredServer : MonitoredServer
{
    private readonly NatsServerHost _host;

    private OurMonitoredServer(NatsServerHost host)
    {
        _host = host;
        Server = host.Server!;
        ClientPort = host.Port;
        MonitorPort = host.MonitoringPort;
    }

    /// <summary>The server behind the host, for assertions on internal state.</summary>
    public NatsServer Server { get; }
    public override string Kind => "ours";
    public override int ClientPort { get; }
    public override int MonitorPort { get; }

    public static Task<OurMonitoredServer> StartAsync(Action<ServerOptions>? configure = null)
    {
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0, HttpPort = -1 };
        configure?.Invoke(options);
        return StartAsync(options);
    }

    /// <summary>Starts with options built elsewhere (e.g. from a config file); the caller sets host and ports.</summary>
    public static async Task<OurMonitoredServer> StartAsync(ServerOptions options) =>
        new(await NatsServerHost.StartAsync(new NatsServerHostOptions { Options = options }));

    public override async ValueTask DisposeAsync()
    {
        await base.DisposeAsync();
        await _host.DisposeAsync();
    }
}

/// <summary>
/// Debian's Go nats-server 2.9.10 with -m -1; both ports are read from its log, readiness from "Server is ready".
/// </summary>
internal sealed partial class GoMonitoredServer : MonitoredServer
{
    private const string BinaryPath = "/usr/sbin/nats-server";
    private readonly Process _process;

    private GoMonitoredServer(Process process, int clientPort, int monitorPort)
    {
        _process = process;
        ClientPort = clientPort;
        MonitorPort = monitorPort;
    }

    public override string Kind => "go";
    public override int ClientPort { get; }
    public override int MonitorPort { get; }

    /// <param name="configFile">An optional configuration file (-c) for settings beyond the defaults.</param>
    public static async Task<GoMonitoredServer> StartAsync(string? configFile = null)
    {
        Assert.True(File.Exists(BinaryPath), $"{BinaryPath} (Debian's nats-server 2.9.10) is required for differential monitoring tests");
        var psi = new ProcessStartInfo(BinaryPath)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        foreach (var arg in new[] { "-a", "127.0.0.1", "-p", "-1", "-m", "-1" })
        {
            psi.ArgumentList.Add(arg);
        }
        if (configFile is not null)
        {
            psi.ArgumentList.Add("-c");
            psi.ArgumentList.Add(configFile);
        }
        var process = new Process { StartInfo = psi, EnableRaisingEvents = true };
        var log = new StringBuilder();
        var ready = new TaskCompletionSource<(int Client, int Monitor)>(TaskCreationOptions.RunContinuationsAsynchronously);
        int clientPort = 0, monitorPort = 0;
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
            if (MonitorLine().Match(line) is { Success: true } monitor)
            {
                monitorPort = int.Parse(monitor.Groups[1].Value);
            }
            else if (ClientLine().Match(line) is { Success: true } client)
            {
                clientPort = int.Parse(client.Groups[1].Value);
            }
            else if (line.Contains("Server is ready", StringComparison.Ordinal))
            {
                ready.TrySetResult((clientPort, monitorPort));
            }
        }
        process.ErrorDataReceived += (_, e) => OnLine(e.Data);
        process.OutputDataReceived += (_, e) => OnLine(e.Data);
        process.Exited += (_, _) => ready.TrySetException(new InvalidOperationException($"nats-server exited early:\n{log}"));
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        try
        {
            var (c, m) = await ready.Task.WaitAsync(TimeSpan.FromSeconds(20));
            Assert.True(c > 0 && m > 0, $"ports not found in the Go log:\n{log}");
            return new GoMonitoredServer(process, c, m);
        }
        catch
        {
            if (!process.HasExited)
            {
                process.Kill();
            }
            process.Dispose();
            throw;
        }
    }

    public override async ValueTask DisposeAsync()
    {
        await base.DisposeAsync();
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill();
            }
        }
        catch (InvalidOperationException)
        {
            // Already exited.
        }
        await _process.WaitForExitAsync();
        _process.Dispose();
    }

    [GeneratedRegex(@"Starting http monitor on [^\s]+:(\d+)")]
    private static partial Regex MonitorLine();

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ClientLine();
}
