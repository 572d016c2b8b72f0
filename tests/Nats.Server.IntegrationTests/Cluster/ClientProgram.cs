using System.Diagnostics;
using System.Text;
using Nats.Server.IntegrationTests.Clients;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// Another language's client as a child process (tests/go/NAME, tests/js/NAME.mjs) that prints lines and reads
/// the test's answers on stdin: clusterclient/cluster.mjs at their checkpoints ("CHECK ...", "KILL"), the fault
/// trials' publishers (faultpub) to stop.
/// </summary>
internal sealed class ClientProgram : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Task<string> _errors;

    private ClientProgram(Process process)
    {
        _process = process;
        _errors = process.StandardError.ReadToEndAsync();
    }

    public string Output => _output.ToString();

    /// <param name="leaf">The servers are a hub and its leaf, not one cluster: no failover step (they share no
    /// connect_urls), and queue members on the first server subscribe before the others (local members are preferred).</param>
    public static Task<ClientProgram> StartAsync(string client, IEnumerable<string> urls, bool leaf = false) =>
        StartAsync(client, "clusterclient", "cluster.mjs", urls, leaf ? new Dictionary<string, string> { ["CLUSTERCLIENT_LEAF"] = "1" } : null);

    /// <summary>Starts tests/go/<paramref name="goProgram"/> (client "nats.go") or tests/js/<paramref name="jsScript"/>
    /// (client "nats.js") with <paramref name="args"/>.</summary>
    public static async Task<ClientProgram> StartAsync(string client, string goProgram, string jsScript, IEnumerable<string> args,
        IReadOnlyDictionary<string, string>? environment = null)
    {
        var psi = client switch
        {
            "nats.go" => new ProcessStartInfo(await NatsGoProgram.BuildAsync(goProgram)),
            "nats.js" => NodeStartInfo(jsScript),
            _ => throw new ArgumentException($"unknown client {client}", nameof(client)),
        };
        foreach (var arg in args)
        {
            psi.ArgumentList.Add(arg);
        }
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            psi.Environment[name] = value;
        }
        psi.RedirectStandardInput = true;
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
        return new ClientProgram(Process.Start(psi) ?? throw new InvalidOperationException($"{client} did not start"));
    }

    /// <summary>The next line the program prints; null once it has exited.</summary>
    public async Task<string?> ReadLineAsync(CancellationToken cancellationToken)
    {
        var line = await _process.StandardOutput.ReadLineAsync(cancellationToken);
        if (line is not null)
        {
            _output.AppendLine(line);
        }
        return line;
    }

    public async Task AnswerAsync(string line)
    {
        await _process.StandardInput.WriteLineAsync(line);
        await _process.StandardInput.FlushAsync();
    }

    /// <summary>Exit code and stderr, once it has exited.</summary>
    public async Task<(int ExitCode, string Errors)> WaitForExitAsync(CancellationToken cancellationToken)
    {
        await _process.WaitForExitAsync(cancellationToken);
        return (_process.ExitCode, await _errors);
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
        }
        await _process.WaitForExitAsync();
        _process.Dispose();
    }

    private static ProcessStartInfo NodeStartInfo(string script)
    {
        var dir = RepoPaths.JsScenarios;
        if (!File.Exists(Path.Combine(dir, "node_modules", "@nats-io", "transport-node", "package.json")))
        {
            throw new InvalidOperationException("nats.js is not installed: run `npm ci --prefix tests/js` from the repository root.");
        }
        return new ProcessStartInfo("node") { WorkingDirectory = dir, ArgumentList = { Path.Combine(dir, script) } };
    }
}
