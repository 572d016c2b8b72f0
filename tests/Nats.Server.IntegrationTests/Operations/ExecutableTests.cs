using System.Diagnostics;
using System.Text.Json;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// The built executable end to end: "-sl reload=pidfile" and "-sl ldm=pidfile" reach a running server
/// started by this test, and -sl's error messages match the Go server's. Signals only ever go to the
/// process this test started (through its pid file) or to pids that cannot exist.
/// </summary>
public sealed partial class ExecutableTests
{
    [Fact]
    public async Task Signal_reload_then_ldm_through_the_pid_file()
    {
        var dir = Directory.CreateTempSubdirectory("nats-ops-exe-").FullName;
        try
        {
            var config = Path.Combine(dir, "server.conf");
            var pidFile = Path.Combine(dir, "server.pid");
            const string lameDuck = "lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"\n";
            await File.WriteAllTextAsync(config, "listen: \"127.0.0.1:-1\"\nmax_payload: 1000\n" + lameDuck);
            var log = new LogLines();
            using var server = StartExecutable(log, "-c", config, "-P", pidFile);
            try
            {
                await log.WaitForAsync("Server is ready");
                var port = int.Parse(ListeningLine().Match((await log.WaitForAsync("Listening for client connections")).Line).Groups[1].Value,
                    System.Globalization.CultureInfo.InvariantCulture);
                await WaitForFileAsync(pidFile);
                Assert.Equal(server.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), await File.ReadAllTextAsync(pidFile));
                await using var client = await Session.OpenAsync(port, "{\"verbose\":false,\"protocol\":1}");

                await File.WriteAllTextAsync(config, "listen: \"127.0.0.1:-1\"\nmax_payload: 2000\ndebug: true\n" + lameDuck);
                Assert.Equal((0, ""), await RunToEndAsync(OurCommand("-sl", $"reload={pidFile}")));
                var (_, reloaded) = await log.WaitForAsync("Reloaded server configuration");
                await log.WaitForAsync("[INF] Reloaded: max_payload = 2000");
                await using (var probe = await Session.OpenAsync(port))
                {
                    using var info = JsonDocument.Parse(probe.Info["INFO ".Length..]);
                    Assert.Equal(2000, info.RootElement.GetProperty("max_payload").GetInt32());
                }
                // debug = true took effect: connection events are now logged at [DBG].
                await log.WaitForAsync(l => l.Contains("[DBG]", StringComparison.Ordinal) && l.Contains("Client connection created", StringComparison.Ordinal), reloaded);

                Assert.Equal((0, ""), await RunToEndAsync(OurCommand("-sl", $"ldm={pidFile}")));
                var lines = await client.ReadUntilClosedAsync(TimeSpan.FromSeconds(60));
                Assert.Equal(2, lines.Count);
                Assert.Contains("\"ldm\":true", lines[0]);
                await server.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
                Assert.Equal(0, server.ExitCode);
                await log.WaitForAsync("Entering lame duck mode, stop accepting new clients");
                await log.WaitForAsync("Server Exiting..");
            }
            finally
            {
                if (!server.HasExited)
                {
                    server.Kill();
                    await server.WaitForExitAsync();
                }
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task Signal_errors_match_go()
    {
        var dir = Directory.CreateTempSubdirectory("nats-ops-sl-").FullName;
        try
        {
            var pidWithNewline = Path.Combine(dir, "newline.pid");
            await File.WriteAllTextAsync(pidWithNewline, "2147483646\n");
            // Every case names a pid, and none that can exist: nothing is ever signalled here.
            string[] cases =
            [
                "reload=abc",
                "reload=1=2",
                "foo=2147483646",
                "reload=2147483646",
                "ldm=2147483646",
                $"quit={pidWithNewline}",
            ];
            foreach (var signal in cases)
            {
                var go = await RunToEndAsync(new ProcessStartInfo(GoServerProcess.BinaryPath) { ArgumentList = { "-sl", signal } });
                var ours = await RunToEndAsync(OurCommand("-sl", signal));
                Assert.True(go == ours, $"-sl {signal}: go {go}, ours {ours}");
                Assert.Equal(1, ours.ExitCode);
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Theory]
    [InlineData("-v")]
    [InlineData("--version")]
    [InlineData("version")]
    public async Task Version_flag_prints_exactly_what_go_prints(string flag)
    {
        var go = await RunCapturingAsync(new ProcessStartInfo(GoServerProcess.BinaryPath) { ArgumentList = { flag } });
        var ours = await RunCapturingAsync(OurCommand(flag));
        Assert.Equal("nats-server: v2.9.10\n", go.Stdout);
        Assert.Equal(go, ours);
    }

    /// <summary>Our executable (<see cref="KillableServer.OursStartInfo"/>: the one CI names, else this build's dll under dotnet).</summary>
    private static ProcessStartInfo OurCommand(params string[] args)
    {
        var psi = KillableServer.OursStartInfo();
        foreach (var arg in args)
        {
            psi.ArgumentList.Add(arg);
        }
        return psi;
    }

    private static Process StartExecutable(LogLines log, params string[] args)
    {
        var psi = OurCommand(args);
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        var process = new Process { StartInfo = psi };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { log.Add(e.Data); } };
        process.Start();
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        return process;
    }

    private static async Task<(int ExitCode, string Stderr)> RunToEndAsync(ProcessStartInfo psi)
    {
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

    private static async Task<(int ExitCode, string Stdout, string Stderr)> RunCapturingAsync(ProcessStartInfo psi)
    {
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        return (process.ExitCode, await stdout, await stderr);
    }

    /// <summary>The pid file is written just after "Server is ready"; wait for it to appear with content.</summary>
    private static async Task WaitForFileAsync(string path)
    {
        var deadline = Stopwatch.StartNew();
        while (!File.Exists(path) || new FileInfo(path).Length == 0)
        {
            Assert.True(deadline.Elapsed < TimeSpan.FromSeconds(30), $"{path} was not written");
            await Task.Delay(20);
        }
    }

    [GeneratedRegex(@"Listening for client connections on [^\s]+:(\d+)")]
    private static partial Regex ListeningLine();
}
