using System.Text.Json;
using System.Text.RegularExpressions;
using Nats.Server.Configuration;
using Nats.Server.IntegrationTests.Monitoring;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.SystemAccount;

/// <summary>
/// <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.JSZ</c> against Go 2.9.10: the same account (a file stream with a message and
/// a durable consumer, made with NATS.Net), the same request options; "data" and "error" must be the same
/// bytes once times and server ids are masked.
/// </summary>
public sealed partial class AccountJszDifferentialTests
{
    private const string Config = """
        system_account: SYS
        jetstream { store_dir: "<dir>" }
        accounts {
          SYS { users: [ {user: sys, password: p} ] }
          A { jetstream: enabled, users: [ {user: a, password: a} ] }
          B { users: [ {user: b, password: b} ] }
          L { jetstream: { max_mem: 1048576, max_file: 2097152 }, users: [ {user: l, password: l} ] }
        }
        """;

    [Theory]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "{\"streams\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "{\"streams\":true,\"consumer\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "{\"streams\":true,\"consumer\":true,\"config\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "{\"consumer\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.A.JSZ", "{\"streams\":\"x\"}")]
    [InlineData("$SYS.REQ.ACCOUNT.L.JSZ", "{\"streams\":true}")]
    [InlineData("$SYS.REQ.ACCOUNT.B.JSZ", "")]
    [InlineData("$SYS.REQ.ACCOUNT.NOPE.JSZ", "")]
    public async Task AccountJszSameAsGo(string subject, string body)
    {
        var root = Directory.CreateTempSubdirectory("nats-jsz-").FullName;
        try
        {
            var goConfig = Path.Combine(root, "go.conf");
            await File.WriteAllTextAsync(goConfig, Config.Replace("<dir>", Path.Combine(root, "go")));
            await using var go = await GoMonitoredServer.StartAsync(goConfig);
            await using var ours = await OurMonitoredServer.StartAsync(options =>
            {
                var bound = ConfigBinder.Bind(options, ConfigParser.Parse(Config.Replace("<dir>", Path.Combine(root, "ours")), "jsz-test"));
                Assert.Empty(bound.Errors);
            });
            var goAnswer = await RunAsync(go, subject, body);
            var ourAnswer = await RunAsync(ours, subject, body);
            Assert.Equal(goAnswer, ourAnswer);
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    private static async Task<string> RunAsync(MonitoredServer server, string subject, string body)
    {
        await using (var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.ClientPort}", AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } }))
        {
            var js = new NatsJSContext(nats);
            await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Description = "jsz <test>" });
            await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("D"));
            (await js.PublishAsync("s.1", "hello")).EnsureSuccess();
        }
        await using var sys = await SysClient.ConnectAsync(server.ClientPort, "sys", "p");
        var reply = await sys.RequestAsync(subject, body);
        var json = reply.Json;
        var parts = new List<string>();
        foreach (var key in new[] { "data", "error" })
        {
            if (json.TryGetProperty(key, out var value))
            {
                parts.Add($"{key}={value.GetRawText()}");
            }
        }
        return Mask(string.Join("\n", parts));
    }

    private static string Mask(string text) =>
        ServerId().Replace(Timestamp().Replace(text, "<time>"), "<server>");

    [GeneratedRegex(@"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")]
    private static partial Regex Timestamp();

    [GeneratedRegex(@"N[A-Z0-9]{55}")]
    private static partial Regex ServerId();
}
