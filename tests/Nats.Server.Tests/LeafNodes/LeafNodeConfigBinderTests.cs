using Nats.Server.Configuration;

namespace Nats.Server.Tests.LeafNodes;

public sealed class LeafNodeConfigBinderTests
{
    private static (ServerOptions Options, ConfigBindResult Result) Bind(string text)
    {
        var options = new ServerOptions();
        var result = ConfigBinder.Bind(options, ConfigParser.Parse(text, "test.conf"));
        return (options, result);
    }

    [Fact]
    public void AcceptSideKeysAreBound()
    {
        var (options, result) = Bind("""
            leafnodes {
              listen: "127.0.0.1:7422"
              advertise: "hub.example:7422"
              no_advertise: true
              reconnect: "5s"
              authorization { users [ { user: a, password: b, account: A }, { user: c, password: d } ], timeout: 3 }
            }
            """);
        Assert.Empty(result.Errors);
        var leaf = options.LeafNodes;
        Assert.Equal(("127.0.0.1", 7422), (leaf.Host, leaf.Port));
        Assert.Equal("hub.example:7422", leaf.Advertise);
        Assert.True(leaf.NoAdvertise);
        Assert.Equal(TimeSpan.FromSeconds(5), leaf.ReconnectInterval);
        Assert.Equal(TimeSpan.FromSeconds(3), leaf.AuthTimeout);
        Assert.Equal(["a", "c"], leaf.Users.Select(u => u.Username));
        Assert.Equal("A", leaf.Users[0].Account);
        Assert.True(leaf.AuthRequired && leaf.Listens && leaf.Enabled);
    }

    [Fact]
    public void RemotesAreBoundWithTheirUrlsAccountsAndDenies()
    {
        var (options, result) = Bind("""
            leaf {
              remotes [
                { url: "nats-leaf://u:p@hub1:7422", account: A, deny_imports: "private.>", deny_exports: ["secret.>", "x"] }
                { urls: ["nats-leaf://hub2:7422", "nats-leaf://hub3:7422"], hub: true }
              ]
            }
            """);
        Assert.Empty(result.Errors);
        var remotes = options.LeafNodes.Remotes;
        Assert.Equal(2, remotes.Count);
        Assert.Equal("hub1", remotes[0].Urls[0].Host);
        Assert.Equal("u:p", remotes[0].Urls[0].UserInfo);
        Assert.Equal("A", remotes[0].LocalAccount);
        Assert.Equal(["private.>"], remotes[0].DenyImports);
        Assert.Equal(["secret.>", "x"], remotes[0].DenyExports);
        Assert.Equal(2, remotes[1].Urls.Count);
        Assert.True(remotes[1].Hub);
        Assert.False(options.LeafNodes.Listens);
        Assert.True(options.LeafNodes.Enabled);
    }

    [Theory]
    [InlineData("leafnodes { bogus: 1 }", "unknown field")]
    [InlineData("leafnodes { authorization { user: a, password: b, users [ { user: c, password: d } ] } }", "can not have a single user/pass and a users array")]
    [InlineData("leafnodes { authorization { users [ { user: c, password: d }, { user: c, password: e } ] } }", "duplicate user \"c\" detected in leafnode authorization")]
    [InlineData("leafnodes { remotes: 5 }", "Expected remotes field to be an array")]
    [InlineData("leafnodes: 5", "Expected map to define a leafnode")]
    [InlineData("leafnodes { tls { cert_file: x } }", "missing 'key_file' in TLS configuration")]
    [InlineData("leafnodes { tls { ca_file: /nonexistent/ca.pem } }", "TLS Server certificate must be present and valid")]
    [InlineData("leafnodes { remotes [ { url: \"tls://h:1\", tls { key_file: k } } ] }", "missing 'cert_file' in TLS configuration")]
    [InlineData("leafnodes { remotes [ { url: \"tls://h:1\", tls { ca_file: /nonexistent/ca.pem } } ] }", "open /nonexistent/ca.pem: no such file or directory")]
    [InlineData("leafnodes { remotes [ { urls: [ \"ws://h:1\", \"nats://h:2\" ] } ] }",
        "remote leaf node configuration cannot have a mix of websocket and non-websocket urls: [\"ws://h:1\" \"nats://h:2\"]")]
    public void MistakesAreReported(string text, string error)
    {
        var (_, result) = Bind(text);
        Assert.Contains(result.Errors, e => e.Contains(error, StringComparison.Ordinal));
    }
}
