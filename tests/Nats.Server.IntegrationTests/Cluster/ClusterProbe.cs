using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// Waiting for interest to cross routes with NATS.Net clients: a subscription on one server only receives what
/// is published on another once its RS+ has arrived there, and no event says when; publishing probes until
/// one lands is the only way a client can tell.
/// </summary>
internal static class ClusterProbe
{
    public const string Payload = "probe";

    /// <summary>Publishes <paramref name="subject"/> until <paramref name="sub"/> sees it: the interest has crossed the route.</summary>
    public static async Task UntilReceivedAsync(NatsConnection publisher, string subject, INatsSub<string> sub)
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (true)
        {
            await publisher.PublishAsync(subject, Payload, cancellationToken: cts.Token);
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(cts.Token);
            wait.CancelAfter(TimeSpan.FromMilliseconds(200));
            try
            {
                var msg = await sub.Msgs.ReadAsync(wait.Token);
                if (msg.Subject == subject)
                {
                    return;
                }
            }
            catch (OperationCanceledException) when (!cts.IsCancellationRequested)
            {
            }
        }
    }

    /// <summary>The next message that is not a leftover probe.</summary>
    public static async Task<NatsMsg<string>> NextAsync(INatsSub<string> sub, string probeSubject)
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (true)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            if (msg.Subject != probeSubject || msg.Data != Payload)
            {
                return msg;
            }
        }
    }

    /// <summary>Requests until a responder answers (its interest may still be on its way across the route).</summary>
    public static async Task<string> RequestUntilAnsweredAsync(NatsConnection requester, string subject, string data)
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (true)
        {
            cts.Token.ThrowIfCancellationRequested();
            try
            {
                var reply = await requester.RequestAsync<string, string>(subject, data,
                    replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2) }, cancellationToken: cts.Token);
                return reply.Data!;
            }
            catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException)
            {
                await Task.Delay(50, cts.Token);
            }
        }
    }
}
