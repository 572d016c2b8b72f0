using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class ConfigBinderTests
{
    private static (ServerOptions Options, ConfigBindResult Result) Bind(string text, string file = "test.conf")
    {
        var options = new ServerOptions();
        var result = ConfigBinder.Bind(options, ConfigParser.Parse(text, file));
        return (options, result);
    }

    private static ServerOptions BindOk(string text)
    {
        var (options, result) = Bind(text);
        Assert.Empty(result.Errors);
        return options;
    }

    [Fact]
    public void MapsEverySupportedTopLevelKey()
    {
        var o = BindOk("""
            host: 127.0.0.1
            port: 4333
            server_name: srv-1
            client_advertise: "example.com:4222"
            max_payload: 2MB
            max_control_line: 8KB
            max_connections: 100
            max_subscriptions: 50
            max_pending: 32MB
            write_deadline: "5s"
            ping_interval: "30s"
            ping_max: 4
            no_header_support: true
            no_fast_producer_stall: true
            debug: true
            trace: true
            logtime: false
            logtime_utc: true
            logfile: "/tmp/x.log"
            logfile_size_limit: 1GB
            max_traced_msg_len: 128
            pidfile: "/tmp/x.pid"
            ports_file_dir: "/tmp"
            http_port: 8222
            authorization { user: u, password: p, timeout: 3 }
            """);
        Assert.Equal("127.0.0.1", o.Host);
        Assert.Equal(4333, o.Port);
        Assert.Equal("srv-1", o.ServerName);
        Assert.Equal("example.com:4222", o.ClientAdvertise);
        Assert.Equal(2 * 1024 * 1024, o.MaxPayload);
        Assert.Equal(8 * 1024, o.MaxControlLine);
        Assert.Equal(100, o.MaxConnections);
        Assert.Equal(50, o.MaxSubscriptions);
        Assert.Equal(32L * 1024 * 1024, o.MaxPending);
        Assert.Equal(TimeSpan.FromSeconds(5), o.WriteDeadline);
        Assert.Equal(TimeSpan.FromSeconds(30), o.PingInterval);
        Assert.Equal(4, o.MaxPingsOut);
        Assert.True(o.NoHeaderSupport);
        Assert.True(o.NoFastProducerStall);
        Assert.True(o.Debug);
        Assert.True(o.Trace);
        Assert.False(o.Logtime);
        Assert.True(o.LogtimeUtc);
        Assert.Equal("/tmp/x.log", o.LogFile);
        Assert.Equal(1L << 30, o.LogSizeLimit);
        Assert.Equal(128, o.MaxTracedMsgLen);
        Assert.Equal("/tmp/x.pid", o.PidFile);
        Assert.Equal("/tmp", o.PortsFileDir);
        Assert.Equal(8222, o.HttpPort);
        Assert.Equal("u", o.Username);
        Assert.Equal("p", o.Password);
        Assert.Equal(TimeSpan.FromSeconds(3), o.AuthTimeout);
    }

    [Theory]
    [InlineData("net: 10.0.0.1")]
    [InlineData("host: 10.0.0.1")]
    [InlineData("listen: 10.0.0.1:4222")]
    public void HostAliases(string text) => Assert.Equal("10.0.0.1", BindOk(text).Host);

    [Fact]
    public void ListenSetsHostAndPortIncludingIpv6()
    {
        var o = BindOk("listen: \"[::1]:5222\"");
        Assert.Equal("::1", o.Host);
        Assert.Equal(5222, o.Port);
        Assert.Equal(6222, BindOk("listen: 6222").Port);
    }

    [Theory]
    [InlineData("port: -1", 0)]
    [InlineData("port: 0", ServerOptions.DefaultPort)]
    [InlineData("listen: 127.0.0.1:-1", 0)]
    public void PortZeroMeansDefaultAndMinusOneMeansRandom(string text, int expected) => Assert.Equal(expected, BindOk(text).Port);

    [Fact]
    public void ZeroLimitsFallBackToDefaultsLikeGo()
    {
        var o = BindOk("max_payload: 0\nmax_connections: 0\nmax_pending: 0\nmax_control_line: 0\nping_max: 0\n");
        Assert.Equal(ServerOptions.DefaultMaxPayload, o.MaxPayload);
        Assert.Equal(ServerOptions.DefaultMaxConnections, o.MaxConnections);
        Assert.Equal(ServerOptions.DefaultMaxPending, o.MaxPending);
        Assert.Equal(ServerOptions.DefaultMaxControlLine, o.MaxControlLine);
        Assert.Equal(2, o.MaxPingsOut);
    }

    [Fact]
    public void HttpHostPortAndAliases()
    {
        var o = BindOk("http: \"127.0.0.1:8333\"");
        Assert.Equal("127.0.0.1", o.HttpHost);
        Assert.Equal(8333, o.HttpPort);
        Assert.Equal(9000, BindOk("monitor_port: 9000").HttpPort);
        Assert.Equal(9001, BindOk("http: 9001").HttpPort);
    }

    [Theory]
    [InlineData("log_file: a.log")]
    [InlineData("logfile: a.log")]
    public void LogFileAliases(string text) => Assert.Equal("a.log", BindOk(text).LogFile);

    [Fact]
    public void KeysAreCaseInsensitive()
    {
        var o = BindOk("PORT: 5000\nMax_Payload: 1KB\n");
        Assert.Equal(5000, o.Port);
        Assert.Equal(1024, o.MaxPayload);
    }

    [Fact]
    public void TraceVerboseImpliesTrace()
    {
        var o = BindOk("trace_verbose: true");
        Assert.True(o.Trace);
        Assert.True(o.TraceVerbose);
    }

    [Fact]
    public void TokenAuthorizationAndFloatTimeout()
    {
        var o = BindOk("authorization { token: \"s3cr3t\", timeout: 0.5 }");
        Assert.Equal("s3cr3t", o.AuthToken);
        Assert.Equal(TimeSpan.FromMilliseconds(500), o.AuthTimeout);
    }

    [Fact]
    public void UserAndTokenTogetherIsAnError()
    {
        var (_, result) = Bind("authorization {\n  user: a\n  token: b\n}\n");
        Assert.Equal(["test.conf:1:0: Cannot have a user/pass and token"], result.Errors);
    }

    [Fact]
    public void UnknownTopLevelKeyNamesFileLineAndKey()
    {
        var (_, result) = Bind("port: 4222\nfoo: bar\n");
        Assert.Equal(["test.conf:2:1: unknown field \"foo\""], result.Errors);
    }

    [Fact]
    public void UnknownAuthorizationKeyIsAnError()
    {
        var (_, result) = Bind("authorization {\n  user: a\n  bogus: 1\n}\n");
        Assert.Equal(["test.conf:3:3: unknown field \"bogus\""], result.Errors);
    }

    [Fact]
    public void KeyUsedAsVariableIsNotUnknown()
    {
        var (options, result) = Bind("SECRET: abc\nauthorization { token: $SECRET }\n");
        Assert.Empty(result.Errors);
        Assert.Equal("abc", options.AuthToken);
    }

    [Fact]
    public void AllErrorsAreCollected()
    {
        var (_, result) = Bind("a: 1\nport: \"x\"\nb: 2\n");
        Assert.Equal(3, result.Errors.Count);
        Assert.Contains("test.conf:2:1: interface conversion: interface {} is string, not int64", result.Errors);
    }

    [Theory]
    [InlineData("debug: 1", "interface conversion: interface {} is int64, not bool")]
    [InlineData("server_name: 42", "interface conversion: interface {} is int64, not string")]
    [InlineData("ping_max: 1.5", "interface conversion: interface {} is float64, not int64")]
    [InlineData("port: [1, 2 ]", "interface conversion: interface {} is []interface {}, not int64")]
    [InlineData("max_payload: 4GB", "max_payload value is too big")]
    [InlineData("listen: \"nocolon\"", "could not parse address string \"nocolon\"")]
    [InlineData("listen: \"h:abc\"", "could not parse port \"abc\"")]
    [InlineData("listen: true", "expected port or host:port, got bool")]
    [InlineData("write_deadline: \"5x\"", "error parsing write_deadline: time: unknown unit \"x\" in duration \"5x\"")]
    public void TypeAndValueErrors(string text, string reason)
    {
        var (_, result) = Bind(text);
        Assert.Equal([$"test.conf:1:0: {reason}"], result.Errors);
    }

    [Fact]
    public void NumericDurationsAreSecondsWithAWarning()
    {
        var (options, result) = Bind("ping_interval: 5\n");
        Assert.Empty(result.Errors);
        Assert.Equal(TimeSpan.FromSeconds(5), options.PingInterval);
        Assert.Equal(["test.conf:1:0: invalid use of field \"ping_interval\": ping_interval should be converted to a duration"], result.Warnings);
    }

    [Fact]
    public void KnownButUnimplementedKeysAreKeptNotRejected()
    {
        var (options, result) = Bind("""
            cluster { port: 6222 }
            leafnodes { port: 7422 }
            mqtt { port: 1883 }
            gateway { name: x, port: 7222 }
            server_tags: [ "a" ]
            authorization { users: [ { user: a, password: b } ] }
            """);
        Assert.Empty(result.Errors);
        Assert.Equal(["server_tags"], options.UnsupportedConfig.Keys);
        Assert.Equal("x", options.Gateway.Name);
        Assert.Equal(7222, options.Gateway.Port);
        Assert.Equal(7422, options.LeafNodes.Port);
        Assert.Equal(6222, options.Cluster.Port);
        Assert.True(options.Cluster.Enabled);
    }

    [Fact]
    public void AuthorizationUsersPermissionsAndNoAuthUserAreBound()
    {
        var (options, result) = Bind("""
            authorization {
              users: [
                { user: a, password: b, permissions: { publish: "foo.>", subscribe: { deny: "secret.>" } } }
                { user: c, password: d }
              ]
              default_permissions: { publish: "public.>" }
            }
            no_auth_user: c
            """);
        Assert.Empty(result.Errors);
        Assert.Empty(options.UnsupportedConfig);
        Assert.Equal(["a", "c"], options.Users!.Select(u => u.Username));
        Assert.Equal("c", options.NoAuthUser);
        Assert.NotNull(options.DefaultPermissions);
    }

    [Theory]
    [InlineData("no_auth_user: x", "users are not defined")]
    [InlineData("accounts { A { users: [ { user: a, password: b } ] } }\nno_auth_user: z", "not present as user")]
    [InlineData("system_account: NOPE", "error resolving system account: account missing")]
    public void StartupChecksRejectWhatParsingAccepts(string text, string expected)
    {
        // Like Go: "-t" accepts these files, the server refuses to start with them.
        var (options, result) = Bind(text);
        Assert.Empty(result.Errors);
        Assert.Contains(expected, ServerOptionsValidation.Validate(options), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("authorization { user: a, password: b, users: [ { user: c, password: d } ] }", "Can not have a single user/pass and a users array")]
    public void AuthorizationConflictsAreErrors(string text, string expected)
    {
        var (_, result) = Bind(text);
        Assert.Contains(result.Errors, e => e.Contains(expected, StringComparison.Ordinal));
    }

    [Fact]
    public void LoaderRecordsConfigFileAndFromTextThrowsOnErrors()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("s.conf", "port: 4999\n");
        var options = new ServerOptions();
        var result = ConfigLoader.Load(options, file);
        Assert.Empty(result.Errors);
        Assert.Equal(file, options.ConfigFile);
        Assert.Equal(4999, options.Port);

        var e = Assert.Throws<ConfigurationException>(() => ConfigLoader.FromText("nope: 1\n", "x.conf"));
        Assert.Equal("x.conf:1:0: unknown field \"nope\"", e.Message);
    }
}

public class ServerOptionsValidationTests
{
    [Fact]
    public void MaxPayloadAboveMaxPendingIsRejected()
    {
        var options = ConfigLoader.FromText("max_payload: 2MB\nmax_pending: 1MB\n");
        Assert.Equal("max_payload (2097152) cannot be higher than max_pending (1048576)", ServerOptionsValidation.Validate(options));
        Assert.Null(ServerOptionsValidation.Validate(new ServerOptions()));
    }
}
