using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Cluster.ClusterProbe;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// Two single-server clusters joined by a gateway, each Go 2.9.10 or ours as a real process, with NATS.Net clients
/// on both sides: pub/sub both ways with every message counted, request/reply across (the <c>_GR_.</c> reply
/// mapping), a queue group served in its own cluster first and across the gateway only when it has no member
/// there, nothing sent where there is no interest, and traffic again after either side is killed and restarted.
/// </summary>
public sealed class GatewayInteropTests
{
    private const int Count = 200;

    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task MessagesCrossBothWaysAndEveryOneIsCounted(string aKind, string bKind)
    {
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind]);
        await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
        foreach (var (publisher, subscriber, prefix) in new[] { (onA, onB, "ab"), (onB, onA, "ba") })
        {
            await using var sub = await subscriber.SubscribeCoreAsync<string>($"{prefix}.>");
            await UntilReceivedAsync(publisher, $"{prefix}.probe", sub);
            for (var i = 0; i < Count; i++)
            {
                await publisher.PublishAsync($"{prefix}.n", i.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
            for (var i = 0; i < Count; i++)
            {
                var msg = await NextAsync(sub, $"{prefix}.probe");
                Assert.Equal(($"{prefix}.n", i.ToString(System.Globalization.CultureInfo.InvariantCulture)), Pair(msg));
            }
            // A round trip on the subscriber's own connection after the publisher's flush: nothing more arrives.
            await publisher.PingAsync();
            await subscriber.PingAsync();
            Assert.False(sub.Msgs.TryRead(out var extra) && extra.Subject != $"{prefix}.probe", $"extra {extra.Subject}");
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task RequestsCrossTheGatewayAndGetTheirReply(string aKind, string bKind)
    {
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind]);
        await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
        foreach (var (requester, responder, subject) in new[] { (onA, onB, "svc.b"), (onB, onA, "svc.a") })
        {
            await using var service = await responder.SubscribeCoreAsync<string>(subject);
            var serving = Task.Run(async () =>
            {
                await foreach (var msg in service.Msgs.ReadAllAsync())
                {
                    // The responder sees the requester's own reply subject, never the gateway's _GR_ form.
                    Assert.DoesNotContain("_GR_", msg.ReplyTo, StringComparison.Ordinal);
                    await msg.ReplyAsync("re:" + msg.Data);
                }
            });
            Assert.Equal("re:first", await RequestUntilAnsweredAsync(requester, subject, "first"));
            for (var i = 0; i < 20; i++)
            {
                var reply = await requester.RequestAsync<string, string>(subject, $"r{i}", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
                Assert.Equal($"re:r{i}", reply.Data);
            }
            await service.UnsubscribeAsync();
            await serving;
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task QueueGroupsPreferTheirOwnCluster(string aKind, string bKind)
    {
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind]);
        await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
        await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
        await using var remoteMember = await onB.SubscribeCoreAsync<string>("work", queueGroup: "workers");
        // Only member in GB: everything published in GA crosses, once each.
        await UntilReceivedAsync(onA, "work", remoteMember);
        for (var i = 0; i < Count; i++)
        {
            await onA.PublishAsync("work", "remote");
        }
        for (var i = 0; i < Count; i++)
        {
            Assert.Equal("remote", (await NextAsync(remoteMember, "work")).Data);
        }

        // A member in GA too: GA's publishes stay in GA, none crosses.
        await using var localMember = await onA.SubscribeCoreAsync<string>("work", queueGroup: "workers");
        await onA.PingAsync();
        for (var i = 0; i < Count; i++)
        {
            await onA.PublishAsync("work", "local");
        }
        for (var i = 0; i < Count; i++)
        {
            Assert.Equal("local", (await NextAsync(localMember, "work")).Data);
        }
        // What GB's member might still get would have been sent before the local ones: a fence message proves none came.
        await onB.PublishAsync("work", "fence");
        Assert.Equal("fence", (await NextAsync(remoteMember, "work")).Data);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task TrafficFlowsAgainAfterEitherSideIsKilledAndRestarted(string aKind, string bKind)
    {
        await using var topology = await GatewayTopology.StartAsync([aKind], [bKind]);
        foreach (var victim in new[] { topology.A, topology.B })
        {
            await victim.KillAsync(0);
            await victim.RestartAsync(0);
            await topology.WaitForGatewaysAsync();
            await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
            await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
            await using var toB = await onB.SubscribeCoreAsync<string>("to.b.>");
            await using var toA = await onA.SubscribeCoreAsync<string>("to.a.>");
            await UntilReceivedAsync(onA, "to.b.probe", toB);
            await UntilReceivedAsync(onB, "to.a.probe", toA);
            await onA.PublishAsync("to.b.after", victim.Spec.ClusterName);
            await onB.PublishAsync("to.a.after", victim.Spec.ClusterName);
            Assert.Equal(("to.b.after", victim.Spec.ClusterName), Pair(await NextAsync(toB, "to.b.probe")));
            Assert.Equal(("to.a.after", victim.Spec.ClusterName), Pair(await NextAsync(toA, "to.a.probe")));
        }
    }

    private static (string, string?) Pair(NatsMsg<string> msg) => (msg.Subject, msg.Data);
}
