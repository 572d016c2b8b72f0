using System.Diagnostics;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Tls;

/// <summary>The --tls* flags: refusals compared with the Go server's output for the same arguments.</summary>
public class TlsCommandLineDifferentialTests
{
    [Theory]
    [InlineData("--tls")]
    [InlineData("--tlscert", "/nonexistent/cert.pem")]
    [InlineData("--tlsverify")]
    [InlineData("--tls", "--tlscert", "/nonexistent/cert.pem", "--tlskey", "/nonexistent/key.pem")]
    public async Task Refusal_matches_go(params string[] args)
    {
        var go = await RunGoAsync([.. args, "-p", "-1"]);
        var ours = Assert.Throws<ConfigurationException>(() => CommandLineOptions.Parse([.. args, "-p", "-1"]).BuildServerOptions(out _));
        Assert.Equal(go, "nats-server: " + ours.Message);
    }

    [Fact]
    public void Tls_false_drops_the_files_tls_block()
    {
        var options = CommandLineOptions.Parse(["--tls=false", "--tlscert", "/nonexistent/cert.pem"]).BuildServerOptions(out _);
        Assert.Null(options.TlsContext);
    }

    private static async Task<string> RunGoAsync(string[] args)
    {
        var psi = new ProcessStartInfo("/usr/sbin/nats-server") { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (var arg in args)
        {
            psi.ArgumentList.Add(arg);
        }
        using var process = Process.Start(psi)!;
        var stderr = process.StandardError.ReadToEndAsync();
        var stdout = process.StandardOutput.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        Assert.NotEqual(0, process.ExitCode);
        return ((await stderr) + (await stdout)).Trim().Split('\n')[0];
    }
}
