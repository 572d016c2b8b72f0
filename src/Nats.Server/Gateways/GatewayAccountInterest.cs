using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.Gateways;

/// <summary>
/// One account's interest as the remote clusters see it (Go's gateway pasi tally): every subscription in our cluster
/// (clients, internal, routed and leaf interest; never interest that came in over a gateway, nor service-import
/// shadows) counted per subject and per subject+queue. Sent on each inbound gateway connection: queue groups as
/// <c>RS+ acc subject queue 1</c> on the first member and <c>RS- acc subject queue</c> on the last; plain subjects in
/// interest-only mode only, RS+ on 0→1 and RS- on 1→0, after the switch (<c>gateway_cmd</c> 2, every subject,
/// <c>gateway_cmd</c> 3). It also remembers the subscriptions of the last 2 s, whose replies are mapped (<c>_GR_.</c>).
/// </summary>
internal sealed class GatewayAccountInterest : ISubscriptionObserver
{
    private static readonly long RecentTtl = (long)TimeSpan.FromSeconds(2).TotalMilliseconds;

    private readonly Account _account;
    private readonly GatewayService _service;
    private readonly Lock _sync = new();
    private readonly Dictionary<(string Subject, string? Queue), int> _counts = new();
    // In creation order, so the expired ones are always at the front.
    private readonly Queue<(string Subject, long Expires)> _recent = new();
    private readonly HashSet<GatewayConnection> _interestOnly = [];

    public GatewayAccountInterest(Account account, GatewayService service)
    {
        _account = account;
        _service = service;
    }

    public void Changed(Subscription subscription, int delta)
    {
        if (!Counts(subscription))
        {
            return;
        }
        var key = (subscription.SubjectString, subscription.QueueString);
        lock (_sync)
        {
            if (delta > 0)
            {
                var now = Environment.TickCount64;
                DropExpired(now);
                _recent.Enqueue((key.SubjectString, now + RecentTtl));
            }
            _counts.TryGetValue(key, out var before);
            var after = Math.Max(0, before + delta);
            if (after == 0)
            {
                _counts.Remove(key);
            }
            else
            {
                _counts[key] = after;
            }
            var first = before == 0 && after > 0;
            var last = before > 0 && after == 0;
            if (!first && !last)
            {
                return;
            }
            foreach (var inbound in _service.Inbound)
            {
                if (subscription.Queue is { } queue)
                {
                    inbound.Link.Outbound.AppendInterest(first, _account.NameUtf8, subscription.Subject, queue, 1);
                }
                else if (_interestOnly.Contains(inbound))
                {
                    inbound.Link.Outbound.AppendInterest(first, _account.NameUtf8, subscription.Subject, default, 0);
                }
                else if (first)
                {
                    SwitchLocked(inbound);
                }
            }
        }
    }

    /// <summary>Peers' interest learned over a gateway never goes back to one; service-import shadows are not interest (Go's sub.si).
    /// The exporter's <c>_R_.&lt;prefix&gt;.&gt;</c> response route is (Go's internal subscription, forwarded): a request that crossed
    /// the gateway in the exporter's account gets its answer back to the server that mapped it.</summary>
    private static bool Counts(Subscription subscription) =>
        !subscription.IsServiceImport && subscription.Kind switch
        {
            Delivery.ReceiverKind.Remote => ((Delivery.RemotePeer)subscription.Receiver).Role != Delivery.PeerRole.Gateway,
            Delivery.ReceiverKind.Import => subscription.Receiver is StreamImportRoute or ResponseRoute,
            _ => true,
        };

    /// <summary>An inbound connection registered: every queue group of the account (Go's sendQueueSubsToGateway).</summary>
    public void SendQueues(GatewayConnection inbound)
    {
        lock (_sync)
        {
            foreach (var ((subject, queue), _) in _counts)
            {
                if (queue is not null)
                {
                    inbound.Link.Outbound.AppendInterest(true, _account.NameUtf8, Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(queue), 1);
                }
            }
        }
    }

    /// <summary>Go's switchAccountToInterestMode for one inbound connection (2.9 does it for every account at once).</summary>
    public void SwitchToInterestOnly(GatewayConnection inbound)
    {
        lock (_sync)
        {
            if (!_interestOnly.Contains(inbound))
            {
                SwitchLocked(inbound);
            }
        }
    }

    private void SwitchLocked(GatewayConnection inbound)
    {
        var outbound = inbound.Link.Outbound;
        outbound.Append(_service.RenderCommand(GatewayCommand.AllSubsStart, _account.Name));
        foreach (var ((subject, queue), _) in _counts)
        {
            if (queue is null)
            {
                outbound.AppendInterest(true, _account.NameUtf8, Encoding.UTF8.GetBytes(subject), default, 0);
            }
        }
        outbound.Append(_service.RenderCommand(GatewayCommand.AllSubsComplete, _account.Name));
        _interestOnly.Add(inbound);
    }

    public bool IsInterestOnly(GatewayConnection inbound)
    {
        lock (_sync)
        {
            return _interestOnly.Contains(inbound);
        }
    }

    public void Forget(GatewayConnection inbound)
    {
        lock (_sync)
        {
            _interestOnly.Remove(inbound);
        }
    }

    /// <summary>Go's shouldMapReplyForGatewaySend: the reply matches a subscription made in the last 2 s.</summary>
    public bool IsRecent(ReadOnlySpan<byte> reply)
    {
        lock (_sync)
        {
            DropExpired(Environment.TickCount64);
            foreach (var (subject, _) in _recent)
            {
                if (SubjectMatches(subject, reply))
                {
                    return true;
                }
            }
        }
        return false;
    }

    private void DropExpired(long now)
    {
        while (_recent.TryPeek(out var oldest) && oldest.Expires <= now)
        {
            _recent.Dequeue();
        }
    }

    /// <summary>Whether the literal <paramref name="subject"/> matches <paramref name="pattern"/> (tokens, <c>*</c> and <c>&gt;</c>).</summary>
    internal static bool SubjectMatches(string pattern, ReadOnlySpan<byte> subject)
    {
        var p = 0;
        var s = 0;
        while (true)
        {
            var pEnd = pattern.IndexOf('.', p);
            var pToken = pEnd < 0 ? pattern.AsSpan(p) : pattern.AsSpan(p, pEnd - p);
            if (s > subject.Length)
            {
                return false;
            }
            var rest = subject[s..];
            var sDot = rest.IndexOf((byte)'.');
            var sToken = sDot < 0 ? rest : rest[..sDot];
            if (pToken is ">")
            {
                return sToken.Length > 0;
            }
            if (pToken is not "*")
            {
                if (pToken.Length != sToken.Length)
                {
                    return false;
                }
                for (var i = 0; i < pToken.Length; i++)
                {
                    if (pToken[i] != sToken[i])
                    {
                        return false;
                    }
                }
            }
            if (pEnd < 0 || sDot < 0)
            {
                return pEnd < 0 && sDot < 0;
            }
            p = pEnd + 1;
            s += sDot + 1;
        }
    }
}
