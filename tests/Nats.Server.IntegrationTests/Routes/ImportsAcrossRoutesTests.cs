using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// Imports whose two ends are on different servers, Go 2.9.10 and ours in every mix (Go+Go shows what Go does):
/// the importer's requester on A and the exporter's responder on B (the request crosses the route in the
/// exporter's account with an <c>_R_</c> reply, the answer comes back on the exporter's response wildcard), and a
/// stream import with the publisher on B and the importer's subscriber on A.
/// </summary>
public sealed class ImportsAcrossRoutesTests
{
    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" }, { "go", "go" } };

    private static ClusterSpec Spec(string kindA, string kindB) => new([kindA, kindB])
    {
        ExtraConfig = _ => """
            accounts {
              EXP {
                users: [ {user: exp, password: exp} ]
                exports: [ {service: "svc.>"}, {stream: "events.>"} ]
              }
              IMP {
                users: [ {user: imp, password: imp} ]
                imports: [ {service: {account: EXP, subject: "svc.>"}}, {stream: {account: EXP, subject: "events.>"}} ]
              }
            }
            """,
    };

    private static NatsConnection Connect(ClusterServer server, string user) =>
        new(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = user, Password = user } });

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task ServiceImportRequesterAndResponderOnDifferentServers(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(kindA, kindB));
        await using var requester = Connect(cluster[0], "imp");
        await using var responder = Connect(cluster[1], "exp");
        var replySubjects = new List<string>();
        await using var service = await responder.SubscribeCoreAsync<string>("svc.>", queueGroup: "workers");
        var serving = Task.Run(async () =>
        {
            await foreach (var msg in service.Msgs.ReadAllAsync())
            {
                lock (replySubjects)
                {
                    replySubjects.Add(msg.ReplyTo ?? "");
                }
                await msg.ReplyAsync(msg.Data!.ToUpperInvariant());
            }
        });

        Assert.Equal("HELLO", await RequestUntilAnsweredAsync(requester, "svc.upper", "hello"));
        int before;
        lock (replySubjects)
        {
            before = replySubjects.Count;
        }
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        for (var i = 0; i < 20; i++)
        {
            var reply = await requester.RequestAsync<string, string>($"svc.n{i}", $"n{i}", cancellationToken: cts.Token);
            Assert.Equal($"N{i}", reply.Data);
        }
        lock (replySubjects)
        {
            // Each request reached the responder once (a copy mapped again on the responder's server would
            // arrive before the last answer, on the same route).
            Assert.Equal(before + 20, replySubjects.Count);
            // The responder sees the exporter's response subject, never the requester's inbox.
            Assert.All(replySubjects, r => Assert.StartsWith("_R_.", r, StringComparison.Ordinal));
        }
    }

    /// <summary>
    /// IMP imports EXP's JetStream API: a stream created through the import on one server of a JetStream cluster is
    /// seen through the import on the others (the request reaches whichever server answers it, the answer comes back
    /// on EXP's response wildcard). Mixed Go/ours JetStream clusters are not supported yet.
    /// </summary>
    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task JetStreamApiImportedFromAnotherAccountAnswersOnEveryServer(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(new ClusterSpec([kind, kind, kind])
        {
            ExtraConfig = s => $$$"""
                jetstream { store_dir: "{{{s.StoreDir}}}" }
                accounts {
                  SYS { users: [ {user: sys, password: sys} ] }
                  EXP { jetstream: enabled, users: [ {user: exp, password: exp} ], exports: [ {service: "$JS.API.>"} ] }
                  IMP { users: [ {user: imp, password: imp} ], imports: [ {service: {account: EXP, subject: "$JS.API.>"}} ] }
                }
                system_account: SYS
                """,
        });
        await using var first = Connect(cluster[0], "imp");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        // Until the meta group has a leader that answers (no answer or "not ready" meanwhile).
        while (true)
        {
            cts.Token.ThrowIfCancellationRequested();
            try
            {
                var created = await first.RequestAsync<string, string>("$JS.API.STREAM.CREATE.ORDERS",
                    """{"name":"ORDERS","subjects":["orders.>"],"num_replicas":1}""",
                    replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(5) }, cancellationToken: cts.Token);
                if (created.Data!.Contains(".stream_create_response\"", StringComparison.Ordinal) && !created.Data.Contains("\"error\"", StringComparison.Ordinal))
                {
                    break;
                }
            }
            catch (Exception e) when (e is NatsNoReplyException or NatsNoRespondersException)
            {
            }
            await Task.Delay(200, cts.Token);
        }
        foreach (var server in cluster.Servers)
        {
            await using var imp = Connect(server, "imp");
            var info = await imp.RequestAsync<string, string>("$JS.API.STREAM.INFO.ORDERS", "",
                replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) }, cancellationToken: cts.Token);
            Assert.True(info.Data!.Contains("\"name\":\"ORDERS\"", StringComparison.Ordinal) && !info.Data.Contains("\"error\"", StringComparison.Ordinal),
                $"{server}: {info.Data}");
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task StreamImportPublisherAndSubscriberOnDifferentServers(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(kindA, kindB));
        await using var subscriber = Connect(cluster[0], "imp");
        await using var publisher = Connect(cluster[1], "exp");
        await using var events = await subscriber.SubscribeCoreAsync<string>("events.>");
        await UntilReceivedAsync(publisher, "events.probe", events);

        for (var i = 0; i < 10; i++)
        {
            await publisher.PublishAsync($"events.e{i}", $"e{i}");
        }
        for (var i = 0; i < 10; i++)
        {
            var msg = await NextAsync(events, "events.probe");
            Assert.Equal(($"events.e{i}", $"e{i}"), (msg.Subject, msg.Data));
        }
    }
}
