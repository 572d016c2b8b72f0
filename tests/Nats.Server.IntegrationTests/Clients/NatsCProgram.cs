using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// Programs written with the C client (tests/c/NAME.c), each compiled once per test run with gcc
/// against Debian's libnats-dev.
/// </summary>
internal static class NatsCProgram
{
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
            if (!File.Exists("/usr/include/nats/nats.h"))
            {
                throw new InvalidOperationException("nats.c not found: apt-get install gcc libnats-dev (scripts/test.sh does)");
            }
            var binary = Path.Combine(Directory.CreateTempSubdirectory($"nats-c-{name}-").FullName, name);
            var source = Path.Combine(RepoPaths.Root, "tests", "c", name + ".c");
            var (exit, _, errors) = await RunProcessAsync("gcc", TimeSpan.FromMinutes(2), ["-Wall", "-Wextra", "-Werror", "-O1", "-o", binary, source, "-lnats", "-lpthread"]);
            if (exit != 0)
            {
                throw new InvalidOperationException($"gcc of {name}.c failed: {errors}");
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
        var (exit, output, errors) = await RunProcessAsync(await BuildAsync(name), timeout, args);
        if (exit != 0)
        {
            throw new InvalidOperationException($"{name} failed (exit {exit}): {errors}\n{output}");
        }
        return output.Trim();
    }

    private static async Task<(int Exit, string Output, string Errors)> RunProcessAsync(string file, TimeSpan timeout, string[] args)
    {
        var start = new ProcessStartInfo(file, args) { RedirectStandardError = true, RedirectStandardOutput = true };
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
            throw new TimeoutException($"{Path.GetFileName(file)} did not finish");
        }
        return (process.ExitCode, await output, await errors);
    }
}
