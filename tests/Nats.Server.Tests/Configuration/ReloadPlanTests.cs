using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Configuration;

/// <summary>The reload diff: Go's field order, what is refused and with which text.</summary>
public class ReloadPlanTests
{
    private static List<string> Messages(ServerOptions old, ServerOptions neu) =>
        ReloadPlan.Diff(old, neu, 4222, out var error)?.Select(c => c.Message).ToList() ?? throw new Xunit.Sdk.XunitException(error);

    private static string Refusal(ServerOptions old, ServerOptions neu)
    {
        Assert.Null(ReloadPlan.Diff(old, neu, 4222, out var error));
        return error!;
    }

    [Fact]
    public void Unchanged_options_still_reload_users_and_accounts_like_go()
    {
        Assert.Equal(["Reloaded: authorization users", "Reloaded: accounts"], Messages(new ServerOptions(), new ServerOptions()));
    }

    [Fact]
    public void Changes_are_listed_in_gos_field_order()
    {
        var neu = new ServerOptions
        {
            MaxTracedMsgLen = 10,
            WriteDeadline = TimeSpan.FromSeconds(3),
            MaxPayload = 2000,
            MaxControlLine = 1024,
            AuthTimeout = TimeSpan.FromSeconds(1.5),
            MaxPingsOut = 5,
            PingInterval = TimeSpan.FromSeconds(90),
            AuthToken = "t",
            MaxConnections = 10,
            Logtime = false,
            Trace = true,
            Debug = true,
            ClientAdvertise = "example.com",
            LogFile = "/tmp/x.log",
            NoFastProducerStall = true,
        };
        Assert.Equal(
        [
            "Reload: client_advertise = example.com",
            "Reloaded: trace = true",
            "Reloaded: debug = true",
            "Reloaded: logtime = false",
            "Reloaded: max_connections = 10",
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: authorization token",
            "Reloaded: ping_interval = 1m30s",
            "Reloaded: ping_max = 5",
            "Reloaded: authorization timeout = 1.5",
            "Reloaded: max_control_line = 1024",
            "Reloaded: max_payload = 2000",
            "Reloaded: no_fast_producer_stall = true",
            "Reloaded: log_file = /tmp/x.log",
            "Reloaded: write_deadline = 3s",
            "Reloaded: max_traced_msg_len = 10",
        ], Messages(new ServerOptions(), neu));
    }

    [Theory]
    [InlineData("MaxSubs", "config reload not supported for MaxSubs: old=0, new=5")]
    [InlineData("MaxPending", "config reload not supported for MaxPending: old=67108864, new=1000")]
    [InlineData("Host", "config reload not supported for Host: old=0.0.0.0, new=127.0.0.1")]
    [InlineData("HTTPPort", "config reload not supported for HTTPPort: old=0, new=8222")]
    [InlineData("LameDuckDuration", "config reload not supported for LameDuckDuration: old=2m0s, new=1m0s")]
    [InlineData("NoHeaderSupport", "config reload not supported for NoHeaderSupport: old=false, new=true")]
    [InlineData("LogSizeLimit", "config reload not supported for LogSizeLimit: old=0, new=100")]
    public void Refused_settings_use_gos_text(string field, string expected)
    {
        var neu = new ServerOptions();
        switch (field)
        {
            case "MaxSubs": neu.MaxSubscriptions = 5; break;
            case "MaxPending": neu.MaxPending = 1000; break;
            case "Host": neu.Host = "127.0.0.1"; break;
            case "HTTPPort": neu.HttpPort = 8222; break;
            case "LameDuckDuration": neu.LameDuckDuration = TimeSpan.FromMinutes(1); break;
            case "NoHeaderSupport": neu.NoHeaderSupport = true; break;
            case "LogSizeLimit": neu.LogSizeLimit = 100; break;
        }
        Assert.Equal(expected, Refusal(new ServerOptions(), neu));
    }

    [Fact]
    public void Port_change_reports_the_bound_port_when_the_old_one_was_random()
    {
        Assert.Equal("config reload not supported for Port: old=4222, new=5222", Refusal(new ServerOptions { Port = 0 }, new ServerOptions { Port = 5222 }));
    }

    [Fact]
    public void First_refused_field_in_gos_order_wins()
    {
        // ServerName comes before MaxSubs in Go's Options struct.
        Assert.Equal("config reload not supported for ServerName: old=, new=b",
            Refusal(new ServerOptions(), new ServerOptions { ServerName = "b", MaxSubscriptions = 3 }));
    }

    [Fact]
    public void No_auth_user_may_only_go_away_with_its_user()
    {
        var old = new ServerOptions { NoAuthUser = "a", Users = [new User { Username = "a", Password = "p" }] };
        Assert.Equal("config reload not supported for NoAuthUser: old=a, new=",
            Refusal(old, new ServerOptions { Users = [new User { Username = "a", Password = "p" }] }));
        Assert.DoesNotContain(Messages(old, new ServerOptions { Users = [new User { Username = "b", Password = "p" }] }),
            m => m.Contains("NoAuthUser", StringComparison.Ordinal));
        Assert.Equal("config reload not supported for NoAuthUser: old=a, new=b",
            Refusal(old, new ServerOptions { NoAuthUser = "b", Users = [new User { Username = "b", Password = "p" }] }));
    }

    [Fact]
    public void Nkey_users_are_compared_by_content()
    {
        static ServerOptions With(string subject) => new()
        {
            Nkeys = [new NkeyUser { Nkey = "UABC", Permissions = new Permissions { Publish = new SubjectPermission { Allow = [subject] } } }],
        };
        Assert.DoesNotContain("Reloaded: authorization nkey users", Messages(With("a"), With("a")));
        Assert.Contains("Reloaded: authorization nkey users", Messages(With("a"), With("b")));
    }
}
