using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>A JetStream cluster's configuration errors, ours against Go 2.9.10's: same text, exit 1.</summary>
public sealed class ClusterConfigErrorTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("nats-jsc-conf-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Theory]
    [InlineData("", "cluster { name: T, listen: 127.0.0.1:-1, routes: [\"nats://127.0.0.1:1\"] }")]
    [InlineData("server_name: A", "cluster { listen: 127.0.0.1:-1, routes: [\"nats://127.0.0.1:1\"] }")]
    public async Task MissingNamesAreRefusedAsGo(string serverName, string cluster)
    {
        var go = await RunAsync(go: true, serverName, cluster);
        var ours = await RunAsync(go: false, serverName, cluster);
        Assert.Equal(1, go.ExitCode);
        Assert.Equal(go, ours);
    }

    [Fact]
    public async Task NoRoutesIsFatalAsGo()
    {
        const string Fatal = "[FTL] Can't start JetStream: JetStream cluster requires configured routes or solicited leafnode for the system account";
        var go = await RunAsync(go: true, "server_name: A", "cluster { name: T, listen: 127.0.0.1:-1 }");
        var ours = await RunAsync(go: false, "server_name: A", "cluster { name: T, listen: 127.0.0.1:-1 }");
        Assert.Equal(1, go.ExitCode);
        Assert.Contains(Fatal, go.Stderr, StringComparison.Ordinal);
        Assert.Equal(1, ours.ExitCode);
        Assert.Contains(Fatal, ours.Stderr, StringComparison.Ordinal);
    }

    private async Task<(int ExitCode, string Stderr)> RunAsync(bool go, string serverName, string cluster)
    {
        var store = Path.Combine(_dir, go ? "go" : "ours");
        var config = Path.Combine(_dir, (go ? "go" : "ours") + ".conf");
        await File.WriteAllTextAsync(config, $"{serverName}\nlisten: 127.0.0.1:-1\njetstream {{ store_dir: \"{store}\" }}\n{cluster}\n");
        var psi = go ? new ProcessStartInfo(GoServerProcess.BinaryPath) : KillableServer.OursStartInfo();
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(config);
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        await stdout;
        return (process.ExitCode, await stderr);
    }
}
