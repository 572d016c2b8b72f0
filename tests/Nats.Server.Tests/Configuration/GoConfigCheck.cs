using System.Diagnostics;
using Nats.Server.Configuration;

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

    /// <summary>
    /// A randomly damaged copy of <paramref name="seed"/>: between 1 and <paramref name="maxEditsExclusive"/> - 1
    /// single-character deletions, insertions or replacements from <paramref name="alphabet"/>.
    /// </summary>
    public static string Mutate(Random random, string seed, string alphabet, int maxEditsExclusive)
    {
        var text = new System.Text.StringBuilder(seed);
        for (var edits = random.Next(1, maxEditsExclusive); edits > 0; edits--)
        {
            var at = random.Next(text.Length + 1);
            var op = random.NextDouble();
            if (op < 0.4 && at < text.Length)
            {
                text.Remove(at, 1);
            }
            else if (op < 0.8 || at == text.Length)
            {
                text.Insert(at, alphabet[random.Next(alphabet.Length)]);
            }
            else
            {
                text[at] = alphabet[random.Next(alphabet.Length)];
            }
        }
        return text.ToString();
    }

    /// <summary>Our own "-t -c file": null when we accept the file, else our error text.</summary>
    public static string? OurRefusal(string file)
    {
        try
        {
            CommandLineOptions.Parse(["-t", "-c", file]).BuildServerOptions(out _);
            return null;
        }
        catch (ConfigurationException e)
        {
            return e.Message;
        }
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
