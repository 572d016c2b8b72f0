namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// Chooses what "our server" means for this run. NATS_DIFF_TARGET=go replaces it with a second Go
/// process, which validates the harness and the scenarios themselves before our server exists.
/// </summary>
internal static class TestServers
{
    public const string TargetVariable = "NATS_DIFF_TARGET";

    /// <summary>Names our server's executable (scripts/test.sh: the Native AOT build): tests then run it as a child
    /// process, with the flags and configuration file Go gets, instead of hosting the server in-process.</summary>
    public const string ExecutableVariable = "NATS_SERVER_EXE";

    public static bool TargetIsGo =>
        string.Equals(Environment.GetEnvironmentVariable(TargetVariable), "go", StringComparison.OrdinalIgnoreCase);

    public static string? Executable => Environment.GetEnvironmentVariable(ExecutableVariable) is { Length: > 0 } path ? path : null;

    public static async Task<ITestServer> StartOursAsync(ServerSettings settings) =>
        TargetIsGo ? await GoServerProcess.StartAsync(settings)
        : Executable is { } executable ? await GoServerProcess.StartAsync(settings, executable, "ours")
        : await InProcessServer.StartAsync(settings);

    public static async Task<ITestServer> StartGoAsync(ServerSettings settings) => await GoServerProcess.StartAsync(settings);

    /// <summary>Starts the Go reference and ours together (one startup's wait, not two); neither leaks if the other fails.</summary>
    public static async Task<(ITestServer Go, ITestServer Ours)> StartPairAsync(ServerSettings settings)
    {
        var goTask = StartGoAsync(settings);
        var oursTask = StartOursAsync(settings);
        try
        {
            await Task.WhenAll(goTask, oursTask);
        }
        catch
        {
            if (goTask.IsCompletedSuccessfully)
            {
                await goTask.Result.DisposeAsync();
            }

            if (oursTask.IsCompletedSuccessfully)
            {
                await oursTask.Result.DisposeAsync();
            }

            throw;
        }

        return (await goTask, await oursTask);
    }
}
