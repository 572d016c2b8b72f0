using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// The Go project's own client as the fast publisher: tests/go/fastpub, built once per test run
/// offline against Debian's golang-github-nats-io-go-nats-dev (scripts/test.sh installs it).
/// </summary>
internal static class NatsGoPublisher
{
    private const string GoPath = "/usr/share/gocode";
    private static readonly SemaphoreSlim BuildLock = new(1, 1);
    private static string? _binary;

    public static async Task<string> BuildAsync()
    {
        await BuildLock.WaitAsync();
        try
        {
            if (_binary is not null)
            {
                return _binary;
            }
            if (!Directory.Exists(Path.Combine(GoPath, "src", "github.com", "nats-io", "nats.go")))
            {
                throw new InvalidOperationException("nats.go not found: apt-get install golang-go golang-github-nats-io-go-nats-dev (scripts/test.sh does)");
            }
            var output = Directory.CreateTempSubdirectory("nats-fastpub-").FullName;
            var binary = Path.Combine(output, "fastpub");
            var start = new ProcessStartInfo("go", ["build", "-o", binary, "."])
            {
                WorkingDirectory = Path.Combine(RepoPaths.Root, "tests", "go", "fastpub"),
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
                throw new InvalidOperationException($"go build failed: {await errors}");
            }
            return _binary = binary;
        }
        finally
        {
            BuildLock.Release();
        }
    }

    /// <summary>Publishes and flushes; returns nats.go's own rate line.</summary>
    public static async Task<string> PublishAsync(int port, string subject, int count, int payloadSize, int publisherIndex)
    {
        var binary = await BuildAsync();
        var start = new ProcessStartInfo(binary, [$"nats://127.0.0.1:{port}", subject, count.ToString(), payloadSize.ToString(), publisherIndex.ToString()])
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        using var publisher = Process.Start(start)!;
        var output = publisher.StandardOutput.ReadToEndAsync();
        var errors = publisher.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(4));
        try
        {
            await publisher.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            publisher.Kill();
            throw new TimeoutException("nats.go publisher did not finish");
        }
        if (publisher.ExitCode != 0)
        {
            throw new InvalidOperationException($"nats.go publisher failed: {await errors}");
        }
        return (await output).Trim();
    }
}
