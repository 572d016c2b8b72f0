using Nats.Server.Configuration;

namespace Nats.Server.Tests.JetStream;

public class JetStreamConfigTests
{
    private static (ServerOptions Options, ConfigBindResult Result) Bind(string text)
    {
        var options = new ServerOptions();
        return (options, ConfigBinder.Bind(options, ConfigParser.Parse(text, "js.conf")));
    }

    [Fact]
    public void BlockSetsEveryServerField()
    {
        var (o, result) = Bind("""
            jetstream {
              store_dir: "/data/js"
              max_memory_store: 1G
              max_file_store: "10G"
              domain: hub
              sync_interval: "10s"
              max_outstanding_catchup: 32MB
            }
            """);
        Assert.Empty(result.Errors);
        Assert.True(o.JetStream.Enabled);
        Assert.Equal("/data/js", o.JetStream.StoreDir);
        Assert.Equal(1_000_000_000L, o.JetStream.MaxMemory);
        Assert.Equal(10L << 30, o.JetStream.MaxStore);
        Assert.Equal("hub", o.JetStream.Domain);
        Assert.Equal(TimeSpan.FromSeconds(10), o.JetStream.SyncInterval);
        Assert.Equal(32L << 20, o.JetStream.MaxCatchup);
    }

    [Theory]
    [InlineData("jetstream: enabled", true)]
    [InlineData("jetstream: disabled", false)]
    [InlineData("jetstream: true", true)]
    [InlineData("jetstream { enabled: false }", false)]
    public void EnabledForms(string text, bool enabled)
    {
        var (o, result) = Bind(text);
        Assert.Empty(result.Errors);
        Assert.Equal(enabled, o.JetStream.Enabled);
    }

    [Fact]
    public void DefaultIsGroupCommitAndAlwaysIsAccepted()
    {
        Assert.Null(Bind("jetstream {}").Options.JetStream.SyncInterval);
        Assert.True(Bind("jetstream { sync_interval: always }").Options.JetStream.SyncAlways);
    }

    [Theory]
    [InlineData("jetstream: maybe", "Expected 'enabled' or 'disabled' for string value, got 'maybe'")]
    [InlineData("jetstream { max_file_store: \"10Q\" }", "max_file_store sizes defined as strings must end in K, M, G, T")]
    [InlineData("jetstream { bogus: 1 }", "unknown field \"bogus\"")]
    [InlineData("store_dir: \"/a\"\njetstream { store_dir: \"/b\" }", "Duplicate 'store_dir' configuration")]
    [InlineData("accounts { A { jetstream { max_streams: \"x\" } } }", "Expected a parseable size for \"max_streams\", got x")]
    public void ErrorsUseGoTexts(string text, string expected)
    {
        var (_, result) = Bind(text);
        Assert.Contains(result.Errors, e => e.Contains(expected, StringComparison.Ordinal));
    }

    [Fact]
    public void AccountLimitsAreBound()
    {
        var (o, result) = Bind("accounts { A { jetstream { max_mem: 1G, max_file: 2G, max_streams: 3, max_consumers: 4, max_ack_pending: 5 } }, B { jetstream: enabled }, C {} }");
        Assert.Empty(result.Errors);
        var a = o.Accounts.Single(x => x.Name == "A").JetStreamLimits!;
        Assert.Equal((1_000_000_000L, 2_000_000_000L, 3, 4, 5), (a.MaxMemory, a.MaxStore, a.MaxStreams, a.MaxConsumers, a.MaxAckPending));
        Assert.Equal(-1, o.Accounts.Single(x => x.Name == "B").JetStreamLimits!.MaxStreams);
        Assert.Null(o.Accounts.Single(x => x.Name == "C").JetStreamLimits);
    }

    [Fact]
    public void CommandLineFlags()
    {
        var cli = CommandLineOptions.Parse(["-js", "-sd", "/tmp/store"]);
        var o = new ServerOptions();
        cli.ApplyTo(o);
        Assert.True(o.JetStream.Enabled);
        Assert.Equal("/tmp/store", o.JetStream.StoreDir);
        var longForm = CommandLineOptions.Parse(["--jetstream", "--store_dir=/x"]);
        var o2 = new ServerOptions();
        longForm.ApplyTo(o2);
        Assert.True(o2.JetStream.Enabled);
        Assert.Equal("/x", o2.JetStream.StoreDir);
    }
}
