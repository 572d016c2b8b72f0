using System.Text.RegularExpressions;
using Nats.Server.Hosting;
using Nats.Server.IntegrationTests.Core;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Accounts;

/// <summary>
/// Import routing details the differential scripts cannot pin down (random reply subjects and RTT
/// values in headers, timers), checked on our server alone.
/// </summary>
public sealed partial class ImportRoutingTests
{
    private static async Task<NatsServer> StartAsync(string config)
    {
        var settings = new ServerSettings { AuthTimeoutSeconds = 10 };
        settings.RawConfig.Add(config);
        var server = new NatsServer(settings.ToServerOptions());
        await server.StartAsync();
        return server;
    }

    private static async Task<RawClient> ConnectAsync(NatsServer server, string user, bool headers = false, string name = "")
    {
        var client = await RawClient.ConnectAsync(server.Port);
        var h = headers ? "true" : "false";
        await client.ConnectAndReadInfoAsync($"{{\"verbose\":false,\"headers\":{h},\"user\":\"{user}\",\"pass\":\"pw\",\"name\":\"{name}\"}}");
        await client.SyncAsync();
        return client;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task RequestsCarryTheRequesterInNatsRequestInfo(bool share)
    {
        await using var server = await StartAsync(
            "accounts { A { users: [{user: a, password: pw}], exports: [{service: svc}] }, "
            + $"B {{ users: [{{user: b, password: pw}}], imports: [{{service: {{account: A, subject: svc}}, share: {(share ? "true" : "false")}}}] }} }}");
        await using var responder = await ConnectAsync(server, "a", headers: true);
        await responder.SendAsync("SUB svc 1\r\n");
        await responder.SyncAsync();
        await using var requester = await ConnectAsync(server, "b", headers: true, name: "req");
        // The requester's own Nats-Request-Info is replaced, its other headers kept.
        const string header = "NATS/1.0\r\nX: 1\r\nNats-Request-Info: {\"acc\":\"forged\"}\r\n\r\n";
        await requester.SendAsync($"SUB in 2\r\nHPUB svc in {header.Length} {header.Length + 2}\r\n{header}hi\r\n");
        await requester.SyncAsync();

        var delivered = await responder.ReadUntilAsync("hi\r\n");
        var match = HmsgLine().Match(delivered);
        Assert.True(match.Success, delivered);
        Assert.Matches(@"^_R_\.[0-9A-Za-z]{6}\.[0-9A-Za-z]{6}$", match.Groups["reply"].Value);
        Assert.Contains("X: 1\r\n", delivered);
        Assert.DoesNotContain("forged", delivered);
        var info = RequestInfo().Match(delivered).Groups[1].Value;
        Assert.Contains("\"acc\":\"B\"", info);
        Assert.Matches("\"rtt\":[1-9][0-9]*", info);
        Assert.Equal(share, info.Contains("\"name\":\"req\"", StringComparison.Ordinal));
        Assert.Equal(share, info.Contains("\"user\":\"b\"", StringComparison.Ordinal));

        await responder.SendAsync($"PUB {match.Groups["reply"].Value} 2\r\nok\r\n");
        await responder.SyncAsync();
        Assert.Contains("MSG in 2 2\r\nok\r\n", await requester.ReadUntilAsync("ok\r\n"));
    }

    [Fact]
    public async Task StreamedResponsesExpireAfterTheThreshold()
    {
        await using var server = await StartAsync(
            "accounts { A { users: [{user: a, password: pw}], exports: [{service: feed, response_type: stream, response_threshold: \"200ms\"}] }, "
            + "B { users: [{user: b, password: pw}], imports: [{service: {account: A, subject: feed}}] } }");
        await using var responder = await ConnectAsync(server, "a");
        await responder.SendAsync("SUB feed 1\r\n");
        await responder.SyncAsync();
        await using var requester = await ConnectAsync(server, "b");
        await requester.SendAsync("SUB in 2\r\nPUB feed in 2\r\ngo\r\n");
        await requester.SyncAsync();
        var reply = MsgReply().Match(await responder.ReadUntilAsync("go\r\n")).Groups["reply"].Value;

        await responder.SendAsync($"PUB {reply} 2\r\np1\r\n");
        await responder.SyncAsync();
        await requester.ReadUntilAsync("p1\r\n");

        var responses = server.FindAccount("A")!.Responses;
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (responses.Count > 0)
        {
            // The sweeper runs on its own timer; wait for its effect, bounded by the deadline.
            await Task.Delay(20, deadline.Token);
        }
        await responder.SendAsync($"PUB {reply} 4\r\nlate\r\n");
        await responder.SyncAsync();
        await requester.SendAsync("PUB in 4\r\nmark\r\n");
        var rest = await requester.ReadUntilAsync("mark\r\n");
        Assert.DoesNotContain("late", rest);
    }

    [Fact]
    public async Task MappingsGoWhenTheRequesterLosesInterestInTheReply()
    {
        await using var server = await StartAsync(
            "accounts { A { users: [{user: a, password: pw}], exports: [{service: svc}] }, "
            + "B { users: [{user: b, password: pw}], imports: [{service: {account: A, subject: svc}}] } }");
        await using var responder = await ConnectAsync(server, "a");
        await responder.SendAsync("SUB svc 1\r\n");
        await responder.SyncAsync();
        await using var requester = await ConnectAsync(server, "b");
        await requester.SendAsync("SUB in.* 1\r\nSUB in.2 2\r\nPUB svc in.1 1\r\na\r\nPUB svc in.2 1\r\nb\r\n");
        await requester.SyncAsync();
        await responder.SyncAsync();
        var responses = server.FindAccount("A")!.Responses;
        Assert.Equal(2, responses.Count);

        // in.2 is still covered by sid 2, in.1 by nothing once the wildcard goes.
        await requester.SendAsync("UNSUB 1\r\n");
        await requester.SyncAsync();
        Assert.Equal(1, responses.Count);
        Assert.Equal("in.2", System.Text.Encoding.ASCII.GetString(Assert.Single(responses.Snapshot()).Reply));

        await requester.SendAsync("UNSUB 2\r\n");
        await requester.SyncAsync();
        Assert.Equal(0, responses.Count);
    }

    [Fact]
    public async Task ServiceImportsChainThroughAnIntermediateAccount()
    {
        await using var server = await StartAsync(
            "accounts { A { users: [{user: a, password: pw}], exports: [{service: \"svc.>\"}] }, "
            + "B { users: [{user: b, password: pw}], imports: [{service: {account: A, subject: \"svc.>\"}}], exports: [{service: \"svc.>\"}] }, "
            + "C { users: [{user: c, password: pw}], imports: [{service: {account: B, subject: \"svc.>\"}, to: \"far.>\"}] } }");
        await using var responder = await ConnectAsync(server, "a");
        await responder.SendAsync("SUB svc.> 1\r\n");
        await responder.SyncAsync();
        await using var requester = await ConnectAsync(server, "c");
        await requester.SendAsync("SUB in 2\r\nPUB far.time in 1\r\n?\r\n");
        await requester.SyncAsync();
        var delivered = await responder.ReadUntilAsync("?\r\n");
        var match = MsgReply().Match(delivered);
        Assert.StartsWith("MSG svc.time 1 _R_.", delivered);
        await responder.SendAsync($"PUB {match.Groups["reply"].Value} 4\r\nnoon\r\n");
        await responder.SyncAsync();
        Assert.Contains("MSG in 2 4\r\nnoon\r\n", await requester.ReadUntilAsync("noon\r\n"));
    }

    [Fact]
    public async Task AQueueGroupInTheImporterSharesAStreamImport()
    {
        await using var server = await StartAsync(
            "accounts { A { users: [{user: a, password: pw}], exports: [{stream: \"feed.>\"}] }, "
            + "B { users: [{user: b, password: pw}], imports: [{stream: {account: A, subject: \"feed.>\"}}] } }");
        await using var first = await ConnectAsync(server, "b");
        await using var second = await ConnectAsync(server, "b");
        await first.SendAsync("SUB feed.> workers 1\r\n");
        await second.SendAsync("SUB feed.> workers 1\r\n");
        await first.SyncAsync();
        await second.SyncAsync();
        await using var publisher = await ConnectAsync(server, "a");
        const int count = 20;
        for (var i = 0; i < count; i++)
        {
            await publisher.SendAsync($"PUB feed.{i} 1\r\nx\r\n");
        }
        await publisher.SyncAsync();
        var a = Regex.Matches((await first.SyncAsync()), "MSG feed").Count;
        var b = Regex.Matches((await second.SyncAsync()), "MSG feed").Count;
        Assert.Equal(count, a + b);
    }

    [GeneratedRegex(@"HMSG svc 1 (?<reply>\S+) \d+ \d+\r\n")]
    private static partial Regex HmsgLine();

    [GeneratedRegex(@"Nats-Request-Info: (\{[^\r]*\})\r\n")]
    private static partial Regex RequestInfo();

    [GeneratedRegex(@"MSG \S+ \d+ (?<reply>_R_\.\S+) \d+\r\n")]
    private static partial Regex MsgReply();
}
