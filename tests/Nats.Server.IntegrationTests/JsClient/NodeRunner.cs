using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JsClient;

/// <summary>Runs tests/js/scenarios.mjs with node and reports exit code and output.</summary>
internal static class NodeRunner
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    public sealed record Result(int ExitCode, string Output);

    public static Task<Result> RunScenariosAsync(params string[] args) => RunScriptAsync("scenarios.mjs", args);

    /// <summary>Runs one script of tests/js (scenarios.mjs, jetstream.mjs) with the given arguments.</summary>
    public static async Task<Result> RunScriptAsync(string script, params string[] args)
    {
        var dir = RepoPaths.JsScenarios;
        var transport = Path.Combine(dir, "node_modules", "@nats-io", "transport-node", "package.json");
        if (!File.Exists(transport))
        {
            throw new InvalidOperationException(
                $"nats.js is not installed ({transport} missing): run `npm ci --prefix tests/js` from the repository root.");
        }

        var psi = new ProcessStartInfo("node")
        {
            WorkingDirectory = dir,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(Path.Combine(dir, script));
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }

        Process process;
        try
        {
            process = Process.Start(psi) ?? throw new InvalidOperationException("node did not start");
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException(
                "node is not on PATH; install Node.js 20+ and run `npm ci --prefix tests/js`.", e);
        }

        using (process)
        {
            var stdout = process.StandardOutput.ReadToEndAsync();
            var stderr = process.StandardError.ReadToEndAsync();
            try
            {
                await process.WaitForExitAsync().WaitAsync(Timeout);
            }
            catch (TimeoutException)
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync();
                return new Result(-1, $"node timed out after {Timeout.TotalSeconds:0}s\n{await stdout}\n{await stderr}");
            }

            return new Result(process.ExitCode, (await stdout) + (await stderr));
        }
    }
}
