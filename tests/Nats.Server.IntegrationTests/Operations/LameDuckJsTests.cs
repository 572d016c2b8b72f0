using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// A real client sees lame duck mode: nats.js (tests/js/scenarios.mjs "ldm") connects, prints READY,
/// the test puts the server into lame duck mode, and the scenario passes once nats.js has reported the
/// "ldm" status and the server has closed the connection. Run against Go too, to validate the scenario.
/// </summary>
public sealed class LameDuckJsTests
{
    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task NatsJs_reports_ldm_status(string kind)
    {
        var transport = Path.Combine(RepoPaths.JsScenarios, "node_modules", "@nats-io", "transport-node", "package.json");
        Assert.True(File.Exists(transport), $"nats.js is not installed ({transport} missing): run `npm ci --prefix tests/js`.");
        await using var server = await OpsServer.StartAsync(kind, "lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"\n");
        var psi = new ProcessStartInfo("node")
        {
            WorkingDirectory = RepoPaths.JsScenarios,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            ArgumentList = { Path.Combine(RepoPaths.JsScenarios, "scenarios.mjs"), $"nats://127.0.0.1:{server.Port}", "ldm" },
        };
        var output = new LogLines();
        using var node = new Process { StartInfo = psi };
        node.OutputDataReceived += (_, e) => { if (e.Data is not null) { output.Add(e.Data); } };
        node.ErrorDataReceived += (_, e) => { if (e.Data is not null) { output.Add(e.Data); } };
        node.Start();
        node.BeginOutputReadLine();
        node.BeginErrorReadLine();
        try
        {
            await output.WaitForAsync(l => l == "READY" || l.StartsWith("FAILED", StringComparison.Ordinal), timeout: TimeSpan.FromSeconds(60));
            server.StartLameDuckMode();
            await node.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(90));
            Assert.True(node.ExitCode == 0, $"nats.js ldm scenario failed against {kind}:\n{output.Text}");
            await output.WaitForAsync("ldm status from");
            await server.WaitForExitAsync(TimeSpan.FromSeconds(60));
        }
        finally
        {
            if (!node.HasExited)
            {
                node.Kill();
                await node.WaitForExitAsync();
            }
        }
    }
}
