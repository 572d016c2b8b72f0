using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class CommandLineOptionsTests
{
    private static ServerOptions Build(params string[] args) =>
        CommandLineOptions.Parse(args).BuildServerOptions(out _);

    [Fact]
    public void NoArgumentsGiveDefaults()
    {
        var o = Build();
        Assert.Equal(ServerOptions.DefaultPort, o.Port);
        Assert.Equal("0.0.0.0", o.Host);
        Assert.True(o.Logtime);
    }

    [Theory]
    [InlineData("-p", "5000")]
    [InlineData("--port", "5000")]
    [InlineData("-p=5000")]
    [InlineData("--port=5000")]
    [InlineData("-port", "5000")]
    public void PortFlagSpellings(params string[] args) => Assert.Equal(5000, Build(args).Port);

    [Theory]
    [InlineData("-1")]
    [InlineData("0")]
    public void RandomPort(string value) => Assert.Equal(0, Build("-p", value).Port);

    [Fact]
    public void GoIntegerSyntaxIsAccepted() => Assert.Equal(0x1f90, Build("-p", "0x1f90").Port);

    [Fact]
    public void AllSupportedValueFlags()
    {
        var o = Build("-a", "127.0.0.1", "-n", "srv", "-l", "/tmp/l.log", "-P", "/tmp/p.pid", "--ports_file_dir", "/tmp",
            "--max_traced_msg_len", "64", "--user", "u", "--pass", "p", "--auth", "tok", "-m", "8222",
            "--log_size_limit", "1000", "--client_advertise", "adv:4222");
        Assert.Equal("127.0.0.1", o.Host);
        Assert.Equal("srv", o.ServerName);
        Assert.Equal("/tmp/l.log", o.LogFile);
        Assert.Equal("/tmp/p.pid", o.PidFile);
        Assert.Equal("/tmp", o.PortsFileDir);
        Assert.Equal(64, o.MaxTracedMsgLen);
        Assert.Equal("u", o.Username);
        Assert.Equal("p", o.Password);
        Assert.Equal("tok", o.AuthToken);
        Assert.Equal(8222, o.HttpPort);
        Assert.Equal(1000, o.LogSizeLimit);
        Assert.Equal("adv:4222", o.ClientAdvertise);
    }

    [Theory]
    [InlineData("--addr")]
    [InlineData("--net")]
    public void HostAliases(string flag) => Assert.Equal("10.1.1.1", Build(flag, "10.1.1.1").Host);

    [Theory]
    [InlineData("--name")]
    [InlineData("--server_name")]
    public void NameAliases(string flag) => Assert.Equal("x", Build(flag, "x").ServerName);

    [Theory]
    [InlineData("-D", true, false, false)]
    [InlineData("--debug", true, false, false)]
    [InlineData("-V", false, true, false)]
    [InlineData("--trace", false, true, false)]
    [InlineData("-DV", true, true, false)]
    [InlineData("-VV", false, true, true)]
    [InlineData("-DVV", true, true, true)]
    public void LoggingFlags(string flag, bool debug, bool trace, bool verbose)
    {
        var o = Build(flag);
        Assert.Equal(debug, o.Debug);
        Assert.Equal(trace, o.Trace);
        Assert.Equal(verbose, o.TraceVerbose);
    }

    [Fact]
    public void LogtimeFlags()
    {
        Assert.False(Build("-T=false").Logtime);
        Assert.False(Build("--logtime=false").Logtime);
        Assert.True(Build("--logtime_utc").LogtimeUtc);
    }

    [Fact]
    public void HelpVersionAndCommands()
    {
        Assert.True(CommandLineOptions.Parse(["-h"]).ShowHelp);
        Assert.True(CommandLineOptions.Parse(["--help"]).ShowHelp);
        Assert.True(CommandLineOptions.Parse(["-v"]).ShowVersion);
        Assert.True(CommandLineOptions.Parse(["--version"]).ShowVersion);
        Assert.True(CommandLineOptions.Parse(["version"]).ShowVersion);
        Assert.True(CommandLineOptions.Parse(["-D", "help"]).ShowHelp);
    }

    [Theory]
    [InlineData(new[] { "-zz" }, "flag provided but not defined: -zz")]
    [InlineData(new[] { "-p", "abc" }, "invalid value \"abc\" for flag -p: parse error")]
    [InlineData(new[] { "-p", "99999999999" }, "invalid value \"99999999999\" for flag -p: value out of range")]
    [InlineData(new[] { "-p" }, "flag needs an argument: -p")]
    [InlineData(new[] { "-D=maybe" }, "invalid boolean value \"maybe\" for -D: parse error")]
    [InlineData(new[] { "---x" }, "bad flag syntax: ---x")]
    [InlineData(new[] { "foo" }, "unrecognized command: \"foo\"")]
    [InlineData(new[] { "--profile", "6060" }, "flag -profile is not supported yet by nats-net-server")]
    public void UsageErrorsUseGoFlagWording(string[] args, string message)
    {
        var e = Assert.Throws<CommandLineException>(() => CommandLineOptions.Parse(args));
        Assert.Equal(message, e.Message);
    }

    [Fact]
    public void DoubleDashEndsFlags()
    {
        // After "--" a flag-looking argument is a (bad) command, as with Go's flag package.
        var e = Assert.Throws<CommandLineException>(() => CommandLineOptions.Parse(["-D", "--", "-V"]));
        Assert.Equal("unrecognized command: \"-V\"", e.Message);
        Assert.True(CommandLineOptions.Parse(["-D", "--", "version"]).ShowVersion);
    }

    [Fact]
    public void FlagsOverrideTheConfigFile()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("s.conf", "port: 4333\nserver_name: from-file\ndebug: true\nmax_payload: 1KB\nlogtime: true\n");
        var o = Build("-c", file, "-p", "5555", "--name", "from-flag", "-D=false", "-T=false");
        Assert.Equal(5555, o.Port);
        Assert.Equal("from-flag", o.ServerName);
        Assert.False(o.Debug);
        Assert.False(o.Logtime);
        Assert.Equal(1024, o.MaxPayload);
        Assert.Equal(file, o.ConfigFile);
    }

    [Fact]
    public void FlagsBeforeAndAfterTheConfigFlagBothOverride()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("s.conf", "port: 4333\nhttp_port: 8000\n");
        var o = Build("-m", "9000", "--config", file, "-p", "-1");
        Assert.Equal(0, o.Port);
        Assert.Equal(9000, o.HttpPort);
    }

    [Fact]
    public void CheckConfigRequiresAConfigFile()
    {
        var cli = CommandLineOptions.Parse(["-t"]);
        Assert.True(cli.CheckConfig);
        var e = Assert.Throws<ConfigurationException>(() => cli.BuildServerOptions(out _));
        Assert.Equal("must specify [-c, --config] option to check configuration file syntax", e.Message);
    }

    [Fact]
    public void CheckConfigTreatsWarningsAsFailures()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("w.conf", "ping_interval: 5\n");
        var running = CommandLineOptions.Parse(["-c", file]);
        running.BuildServerOptions(out var warnings);
        Assert.Single(warnings);

        var checking = CommandLineOptions.Parse(["-t", "-c", file]);
        var e = Assert.Throws<ConfigurationException>(() => checking.BuildServerOptions(out _));
        Assert.Contains("ping_interval should be converted to a duration", e.Message);
    }

    [Fact]
    public void InvalidConfigFileFailsWithAllErrors()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("bad.conf", "port: 4222\nfoo: bar\nauthorization {\n  user: a\n  bogus: 1\n}\n");
        var e = Assert.Throws<ConfigurationException>(() => Build("-c", file));
        Assert.Equal([$"{file}:2:1: unknown field \"foo\"", $"{file}:5:3: unknown field \"bogus\""], e.Errors);
    }

    [Fact]
    public void VersionStringsAreSet()
    {
        Assert.Equal("2.9.10", ServerVersion.ProtocolVersion);
        Assert.Matches(@"^\d+\.\d+\.\d+", ServerVersion.BuildVersion);
        Assert.Contains("--config", UsageText.Text);
    }
}
