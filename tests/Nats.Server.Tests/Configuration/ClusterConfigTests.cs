using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>The cluster block and flags, bound as Go's parseCluster and overrideCluster bind them.</summary>
public sealed class ClusterConfigTests
{
    private static (ServerOptions Options, ConfigBindResult Result) Bind(string text)
    {
        var options = new ServerOptions();
        return (options, ConfigBinder.Bind(options, ConfigParser.Parse(text, "test.conf")));
    }

    [Fact]
    public void ClusterBlockIsBound()
    {
        var (options, result) = Bind("""
            cluster {
              name: east
              listen: "127.0.0.1:6222"
              authorization { user: ruser, password: rpass, timeout: 3 }
              routes: [ "nats-route://ruser:rpass@127.0.0.1:6223", "nats://127.0.0.1:6224" ]
              no_advertise: true
              connect_retries: 5
              advertise: "10.0.0.1:6222"
              pool_size: 3
              accounts: [ A ]
            }
            """);
        Assert.Empty(result.Errors);
        var cluster = options.Cluster;
        Assert.True(cluster.Enabled);
        Assert.Equal(("east", "127.0.0.1", 6222), (cluster.Name, cluster.Host, cluster.Port));
        Assert.Equal(("ruser", "rpass", TimeSpan.FromSeconds(3)), (cluster.Username, cluster.Password, cluster.AuthTimeout));
        Assert.Equal([6223, 6224], cluster.Routes.Select(r => r.Port));
        Assert.True(cluster.NoAdvertise);
        Assert.Equal(5, cluster.ConnectRetries);
        Assert.Equal("10.0.0.1:6222", cluster.Advertise);
        Assert.Empty(options.UnsupportedConfig);
    }

    [Theory]
    [InlineData("cluster { authorization { token: abc } }", "Cluster authorization does not support tokens")]
    [InlineData("cluster { authorization { users: [ { user: a, password: b } ] } }", "Cluster authorization does not allow multiple users")]
    [InlineData("cluster { bogus: 1 }", "unknown field \"bogus\"")]
    [InlineData("cluster: 5", "Expected map to define cluster, got int64")]
    public void ClusterErrorsUseGoTexts(string text, string error)
    {
        var (_, result) = Bind(text);
        Assert.Contains(result.Errors, e => e.EndsWith(error, StringComparison.Ordinal));
    }

    [Fact]
    public void DuplicateRouteIsAWarning()
    {
        var (options, result) = Bind("cluster { port: 6222, routes: [ \"nats://a:1\", \"nats://a:1\" ] }");
        Assert.Empty(result.Errors);
        Assert.Contains(result.Warnings, w => w.EndsWith("Duplicate route entry detected", StringComparison.Ordinal));
        Assert.Single(options.Cluster.Routes);
    }

    [Fact]
    public void ClusterPermissionsAreBoundAsImportAndExport()
    {
        var (options, result) = Bind("""
            cluster {
              port: 6222
              permissions { import: { allow: ["imp.>"] }, export: { allow: ["exp.>"], deny: ["exp.secret"] } }
            }
            """);
        Assert.Empty(result.Errors);
        var permissions = options.Cluster.Permissions!;
        Assert.Equal(["imp.>"], permissions.Import!.Allow!);
        Assert.Equal(["exp.secret"], permissions.Export!.Deny!);
        Assert.True(permissions.CanImport("imp.a") && permissions.CanImport("imp.>"));
        Assert.False(permissions.CanImport("other.a"));
        Assert.True(permissions.CanExport("exp.a") && permissions.CanExport("exp.>"));
        Assert.False(permissions.CanExport("exp.secret"));
        // A wildcard wider than the deny entry is kept, with the denied subject filtered out of deliveries.
        Assert.True(permissions.NeedsDeliveryFilter("exp.>"));
        Assert.False(permissions.NeedsDeliveryFilter("exp.a"));
        Assert.True(permissions.DeliveryDenied("exp.secret"u8));
        Assert.False(permissions.DeliveryDenied("exp.a"u8));
    }

    [Fact]
    public void ClusterAuthorizationPermissionsAreDeprecatedAndLoseToTheTopLevelBlock()
    {
        var (options, result) = Bind("""
            cluster {
              port: 6222
              permissions { import: ["a.>"] }
              authorization { user: u, password: p, permissions { import: ["b.>"] } }
            }
            """);
        Assert.Empty(result.Errors);
        Assert.Contains(result.Warnings, w => w.EndsWith("invalid use of field \"authorization\": setting \"permissions\" within cluster authorization block is deprecated", StringComparison.Ordinal));
        Assert.Equal(["a.>"], options.Cluster.Permissions!.Import!.Allow!);
    }

    [Fact]
    public void ClusterPermissionsRefuseDynamicResponses()
    {
        var (_, result) = Bind("cluster { port: 6222, permissions { allow_responses: true } }");
        Assert.Contains(result.Errors, e => e.EndsWith("Cluster permissions do not support dynamic responses", StringComparison.Ordinal));
    }

    [Fact]
    public void ClusterFlagsOverrideTheFile()
    {
        var options = CommandLineOptions.Parse(["--cluster", "nats://u:p@127.0.0.1:-1", "--cluster_name", "west",
            "--routes", "nats://127.0.0.1:7001,nats://127.0.0.1:7002", "--no_advertise", "--connect_retries", "4",
            "--cluster_advertise", "example.org:7000"]).BuildServerOptions(out _);
        var cluster = options.Cluster;
        Assert.True(cluster.Enabled);
        Assert.Equal(("127.0.0.1", -1, "u", "p"), (cluster.Host, cluster.Port, cluster.Username, cluster.Password));
        Assert.Equal("west", cluster.Name);
        Assert.Equal([7001, 7002], cluster.Routes.Select(r => r.Port));
        Assert.True(cluster.NoAdvertise);
        Assert.Equal(4, cluster.ConnectRetries);
        Assert.Equal("example.org:7000", cluster.Advertise);
    }
}
