using System.Diagnostics;

namespace Nats.Server.Tests.Configuration;

/// <summary>Runs the Go oracle's "-t -c file" (every config differential test uses it) and extracts the reason of a refusal.</summary>
internal static class GoConfigCheck
{
    private const string GoServer = "/usr/sbin/nats-server";

    public static async Task<(bool Accepts, string Output)> RunAsync(string file)
    {
        Assert.True(File.Exists(GoServer), $"the Go oracle {GoServer} is required");
        var psi = new ProcessStartInfo(GoServer)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add("-t");
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(file);
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        await Task.WhenAll(stdout, stderr);
        return (process.ExitCode == 0, (await stderr).TrimEnd('\n') + await stdout);
    }

    /// <summary>"nats-server: file:1:2: reason" → "reason".</summary>
    public static string Reason(string goOutput)
    {
        var line = goOutput.Trim().Split('\n')[0];
        var confAt = line.IndexOf(".conf:", StringComparison.Ordinal);
        if (confAt < 0)
        {
            return line.Replace("nats-server: ", "");
        }
        var rest = line[(confAt + ".conf:".Length)..];
        var parts = rest.Split(": ", 2);
        return parts.Length == 2 ? parts[1] : rest;
    }
}
