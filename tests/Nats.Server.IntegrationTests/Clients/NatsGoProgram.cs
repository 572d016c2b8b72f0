using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// Programs written with the Go project's own client (tests/go/NAME), each built once per test run
/// offline against Debian's golang-github-nats-io-go-nats-dev (scripts/test.sh installs it).
/// </summary>
internal static class NatsGoProgram
{
    private const string GoPath = "/usr/share/gocode";
    private static readonly SemaphoreSlim BuildLock = new(1, 1);
    private static readonly Dictionary<string, string> Binaries = [];

    public static async Task<string> BuildAsync(string name)
    {
        await BuildLock.WaitAsync();
        try
        {
            if (Binaries.TryGetValue(name, out var built))
            {
                return built;
            }
            if (!Directory.Exists(Path.Combine(GoPath, "src", "github.com", "nats-io", "nats.go")))
            {
                throw new InvalidOperationException("nats.go not found: apt-get install golang-go golang-github-nats-io-go-nats-dev (scripts/test.sh does)");
            }
            var output = Directory.CreateTempSubdirectory($"nats-{name}-").FullName;
            var binary = Path.Combine(output, name);
            var start = new ProcessStartInfo("go", ["build", "-o", binary, "."])
            {
                WorkingDirectory = Path.Combine(RepoPaths.Root, "tests", "go", name),
                RedirectStandardError = true,
                RedirectStandardOutput = true,
            };
            start.Environment["GO111MODULE"] = "off";
            start.Environment["GOPATH"] = GoPath;
            start.Environment["GOCACHE"] = Path.Combine(output, "cache");
            using var build = Process.Start(start)!;
            var errors = build.StandardError.ReadToEndAsync();
            await build.StandardOutput.ReadToEndAsync();
            await build.WaitForExitAsync();
            if (build.ExitCode != 0)
            {
                throw new InvalidOperationException($"go build of {name} failed: {await errors}");
            }
            Binaries[name] = binary;
            return binary;
        }
        finally
        {
            BuildLock.Release();
        }
    }

    /// <summary>Runs a built program to its end; returns its standard output, throws with its standard
    /// error when it exits non-zero or outlives <paramref name="timeout"/>.</summary>
    public static async Task<string> RunAsync(string name, TimeSpan timeout, params string[] args)
    {
        var binary = await BuildAsync(name);
        var start = new ProcessStartInfo(binary, args)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var errors = process.StandardError.ReadToEndAsync();
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            throw new TimeoutException($"{name} did not finish");
        }
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{name} failed: {await errors}");
        }
        return (await output).Trim();
    }
}
