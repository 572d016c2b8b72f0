using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// A service import whose two ends are in different clusters of a gateway, Go 2.9.10 and ours in every pairing: the
/// requester's account imports the service from the exporter's, the responder is in the other cluster, so the request
/// crosses in the exporter's account with an <c>_R_</c> reply and the answer crosses back to be mapped to the requester.
/// </summary>
public sealed class GatewayServiceImportTests
{
    private const string Accounts = """
        accounts {
          EXP { users [ { user: exp, password: exp } ], exports [ { service: "svc.>" } ] }
          IMP { users [ { user: imp, password: imp } ], imports [ { service: { account: EXP, subject: "svc.>" } } ] }
        }
        """;

    public static TheoryData<string, string> Pairs => new() { { "go", "go" }, { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RequestsThroughAServiceImportAreAnsweredFromTheOtherCluster(string aKind, string bKind)
    {
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind], extra: Accounts);
        var (a, b) = (topology.A[0], topology.B[0]);
        await using var requester = new NatsConnection(new NatsOpts { Url = a.Url, AuthOpts = new NatsAuthOpts { Username = "imp", Password = "imp" } });
        await using var responder = new NatsConnection(new NatsOpts { Url = b.Url, AuthOpts = new NatsAuthOpts { Username = "exp", Password = "exp" } });
        using var cts = new CancellationTokenSource(Cluster.TestCluster.Deadline);
        await using var sub = await responder.SubscribeCoreAsync<string>("svc.echo", cancellationToken: cts.Token);
        var serve = Task.Run(async () =>
        {
            await foreach (var m in sub.Msgs.ReadAllAsync(cts.Token))
            {
                await m.ReplyAsync($"echo {m.Data}", cancellationToken: cts.Token);
            }
        }, cts.Token);
        await responder.PingAsync(cts.Token);

        // The exporter's interest crosses the gateway on its own time: ask until the first answer comes back.
        var replyOpts = new NatsSubOpts { Timeout = TimeSpan.FromSeconds(1) };
        while (true)
        {
            try
            {
                var first = await requester.RequestAsync<string, string>("svc.echo", "probe", replyOpts: replyOpts, cancellationToken: cts.Token);
                Assert.Equal("echo probe", first.Data);
                break;
            }
            catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or TimeoutException && !cts.IsCancellationRequested)
            {
                await Task.Delay(200, cts.Token);
            }
        }
        for (var i = 0; i < 5; i++)
        {
            var reply = await requester.RequestAsync<string, string>("svc.echo", $"r{i}", replyOpts: replyOpts, cancellationToken: cts.Token);
            Assert.Equal($"echo r{i}", reply.Data);
        }
        await cts.CancelAsync();
        await Task.WhenAny(serve);
    }
}
