using System.Diagnostics;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>
/// Settings for operations: lame duck timing, http_base_path, max_closed_clients and -sl. Error texts
/// are checked against the Go server's "-t" output on the same file.
/// </summary>
public class OperationsConfigTests
{
    private const string GoServer = "/usr/sbin/nats-server";

    [Theory]
    [InlineData("lame_duck_duration: \"2s\"\n", "invalid lame_duck_duration of 2s, minimum is 30 seconds")]
    [InlineData("lame_duck_grace_period: \"-1s\"\n", "invalid lame_duck_grace_period, needs to be positive")]
    [InlineData("lame_duck_duration: 30\n", "interface conversion: interface {} is int64, not string")]
    [InlineData("lame_duck_duration: \"abc\"\n", "error parsing lame_duck_duration: time: invalid duration \"abc\"")]
    [InlineData("lame_duck_duration: \"45s\"\nlame_duck_grace_period: \"0s\"\n", null)]
    [InlineData("http_base_path: \"/mon\"\n", null)]
    public async Task Errors_match_go_check(string text, string? expected)
    {
        using var dir = new TempDirectory();
        var file = dir.Write("t.conf", text);
        var go = await GoCheckAsync(file);
        string ours;
        try
        {
            CommandLineOptions.Parse(["-t", "-c", file]).BuildServerOptions(out _);
            ours = $"nats-server: configuration file {file} is valid";
        }
        catch (ConfigurationException e)
        {
            ours = $"nats-server: {e.Message}";
        }
        Assert.Equal(go, ours);
        if (expected is null)
        {
            Assert.EndsWith("is valid", ours);
        }
        else
        {
            Assert.EndsWith(expected, ours);
        }
    }

    [Fact]
    public void Lame_duck_and_monitoring_keys_bind()
    {
        var o = ConfigLoader.FromText("lame_duck_duration: \"1m\"\nlame_duck_grace_period: \"5s\"\nhttp_base_path: \"mon/\"\nmax_closed_clients: 7\n");
        Assert.Equal(TimeSpan.FromMinutes(1), o.LameDuckDuration);
        Assert.Equal(TimeSpan.FromSeconds(5), o.LameDuckGracePeriod);
        Assert.Equal("mon/", o.HttpBasePath);
        Assert.Equal(7, o.MaxClosedClients);
        Assert.DoesNotContain("lame_duck_duration", o.UnsupportedConfig.Keys);
    }

    [Fact]
    public void Defaults_are_gos()
    {
        var o = new ServerOptions();
        Assert.Equal(TimeSpan.FromMinutes(2), o.LameDuckDuration);
        Assert.Equal(TimeSpan.FromSeconds(10), o.LameDuckGracePeriod);
        // Go keeps the default grace period for an explicit 0.
        Assert.Equal(TimeSpan.FromSeconds(10), ConfigLoader.FromText("lame_duck_grace_period: \"0s\"\n").LameDuckGracePeriod);
    }

    [Fact]
    public void Grace_period_must_be_below_duration()
    {
        var o = new ServerOptions { LameDuckDuration = TimeSpan.FromSeconds(30), LameDuckGracePeriod = TimeSpan.FromSeconds(30) };
        Assert.Equal("lame duck grace period (30s) should be strictly lower than lame duck duration (30s)", ServerOptionsValidation.Validate(o));
        o.LameDuckGracePeriod = TimeSpan.FromSeconds(29);
        Assert.Null(ServerOptionsValidation.Validate(o));
    }

    [Theory]
    [InlineData(new[] { "-sl", "reload" }, "reload")]
    [InlineData(new[] { "--signal", "ldm=/var/run/nats.pid" }, "ldm=/var/run/nats.pid")]
    [InlineData(new[] { "-sl=quit=123" }, "quit=123")]
    public void Signal_flag_is_parsed(string[] args, string expected)
    {
        Assert.Equal(expected, CommandLineOptions.Parse(args).Signal);
    }

    [Theory]
    [InlineData("stop=42", 9)]
    [InlineData("quit=42", 2)]
    [InlineData("term=42", 15)]
    [InlineData("reopen=42", 10)]
    [InlineData("reload=42", 1)]
    [InlineData("ldm=42", 12)]
    public void Signal_commands_map_to_gos_signals(string command, int signal)
    {
        var sent = new List<(int Pid, int Signal)>();
        Assert.Null(SignalCommand.Send(command, kill: (pid, sig) => { sent.Add((pid, sig)); return 0; }));
        Assert.Equal([(42, signal)], sent);
    }

    [Fact]
    public void Signal_pid_comes_from_a_pid_file_and_errors_use_gos_words()
    {
        using var dir = new TempDirectory();
        var pidFile = dir.Write("server.pid", "4242");
        var sent = new List<(int Pid, int Signal)>();
        int Fake(int pid, int sig)
        {
            sent.Add((pid, sig));
            return pid == 4242 ? 0 : 3;
        }
        Assert.Null(SignalCommand.Send($"reload={pidFile}", kill: Fake));
        Assert.Equal([(4242, 1)], sent);
        Assert.Equal("no such process", SignalCommand.Send("reload=77", kill: Fake));
        Assert.Equal("invalid pid: abc", SignalCommand.Send("reload=abc", kill: Fake));
        Assert.Equal("invalid signal parameters: [2 3]", SignalCommand.Send("reload=1=2=3", kill: Fake));
        Assert.Equal("unknown signal \"foo\"", SignalCommand.Send("foo=1", kill: Fake));
        // A process name nothing runs under: pgrep finds none (no signal is sent).
        Assert.Equal("no nats-ops-test-nonexistent processes running", SignalCommand.Send("reload", "nats-ops-test-nonexistent", Fake));
        Assert.Equal(2, sent.Count);
    }

    [Theory]
    [InlineData(null, "/")]
    [InlineData("", "/")]
    [InlineData("mon", "/mon")]
    [InlineData("/mon/", "/mon")]
    [InlineData("//a/./b/../c", "/a/c")]
    public void Base_path_is_normalised_like_go(string? configured, string expected)
    {
        Assert.Equal(expected, Monitoring.MonitoringServer.NormalizeBasePath(configured));
    }

    private static async Task<string> GoCheckAsync(string file)
    {
        Assert.True(File.Exists(GoServer), $"the Go oracle {GoServer} is required");
        var psi = new ProcessStartInfo(GoServer)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
            ArgumentList = { "-t", "-c", file },
        };
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        await stdout;
        return (await stderr).Trim();
    }
}
