using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.Routes;

/// <summary>
/// One account's local interest as peers see it (Go's per-account route map): counts per subject and
/// per subject+queue of the subscriptions that live here (clients, the server's own handlers,
/// JetStream, stream-import shadows, service-response wildcards), turned into RS+ on 0→1 and RS- on 1→0, and for a queue group
/// an RS+ with the new weight on every change. It observes the account's index under the index lock,
/// and sends while holding its own lock, so peers see the changes in the order the index made them.
/// </summary>
internal sealed class LocalInterest : ISubscriptionObserver
{
    private readonly Account _account;
    private readonly RouteTable _routes;
    private readonly Lock _sync = new();
    private readonly Dictionary<(string Subject, string? Queue), int> _counts = new();

    // The leaf cluster of the subscription that made a key appear (Go's sub.origin), sent with its LS+.
    private readonly Dictionary<(string Subject, string? Queue), byte[]> _origins = new();

    // The cluster's import permissions as this map last applied them; replaced under the lock by a reload.
    private RoutePermissions? _permissions;

    public LocalInterest(Account account, RouteTable routes)
    {
        _account = account;
        _routes = routes;
        _permissions = routes.Permissions;
    }

    public Account Account => _account;

    public void Changed(Subscription subscription, int delta)
    {
        if (!IsLocal(subscription))
        {
            return;
        }
        var key = (subscription.SubjectString, subscription.QueueString);
        lock (_sync)
        {
            _counts.TryGetValue(key, out var before);
            var after = before + delta;
            if (after == 0)
            {
                _counts.Remove(key);
            }
            else
            {
                _counts[key] = after;
            }
            if (before == 0 && subscription.Origin is { Length: > 0 } origin)
            {
                _origins[key] = System.Text.Encoding.UTF8.GetBytes(origin);
            }
            var leafOrigin = _origins.GetValueOrDefault(key);
            if (after == 0)
            {
                _origins.Remove(key);
            }
            if (_permissions is { } permissions && !permissions.CanImport(key.SubjectString))
            {
                return;
            }
            var queue = subscription.Queue;
            if (queue is null)
            {
                if (before == 0 && after == 1)
                {
                    Broadcast(true, subscription.Subject, default, 0, leafOrigin);
                }
                else if (before == 1 && after == 0)
                {
                    Broadcast(false, subscription.Subject, default, 0, leafOrigin);
                }
            }
            else if (after > 0)
            {
                Broadcast(true, subscription.Subject, queue, after, leafOrigin);
            }
            else if (before > 0)
            {
                Broadcast(false, subscription.Subject, queue, 0, leafOrigin);
            }
        }
    }

    /// <summary>The whole map to a route that just registered (Go's sendSubsToRoute).</summary>
    public void DumpTo(RouteConnection route)
    {
        lock (_sync)
        {
            foreach (var ((subject, queue), count) in _counts)
            {
                if (count > 0 && (_permissions is not { } permissions || permissions.CanImport(subject)))
                {
                    route.Outbound.AppendInterest(true, _account.NameUtf8, System.Text.Encoding.UTF8.GetBytes(subject),
                        queue is null ? default : System.Text.Encoding.UTF8.GetBytes(queue), count, OriginFor(route, _origins.GetValueOrDefault((subject, queue))));
                }
            }
        }
    }

    /// <summary>
    /// Go's reloadClusterPermissions for this account: RS+ to every route for what may now be imported and was not,
    /// RS- for what may no longer be; later changes are filtered by the new permissions.
    /// </summary>
    public void Reannounce(RoutePermissions? now)
    {
        lock (_sync)
        {
            var then = _permissions;
            _permissions = now;
            foreach (var ((subject, queue), count) in _counts)
            {
                var before = then?.CanImport(subject) ?? true;
                var after = now?.CanImport(subject) ?? true;
                if (before != after)
                {
                    var origin = _origins.GetValueOrDefault((subject, queue));
                    var queueBytes = queue is null ? default : System.Text.Encoding.UTF8.GetBytes(queue);
                    Broadcast(after, System.Text.Encoding.UTF8.GetBytes(subject), queueBytes, after && queue is not null ? count : 0, origin);
                }
            }
        }
    }

    /// <summary>Go's updateRemoteRoutePerms: RS+ to <paramref name="route"/> for the importable interest <paramref name="newlyExported"/> picks.</summary>
    public void ResendTo(RouteConnection route, Func<string, bool> newlyExported)
    {
        lock (_sync)
        {
            foreach (var ((subject, queue), count) in _counts)
            {
                if ((_permissions is not { } permissions || permissions.CanImport(subject)) && newlyExported(subject))
                {
                    route.Outbound.AppendInterest(true, _account.NameUtf8, System.Text.Encoding.UTF8.GetBytes(subject),
                        queue is null ? default : System.Text.Encoding.UTF8.GetBytes(queue), queue is null ? 0 : count,
                        OriginFor(route, _origins.GetValueOrDefault((subject, queue))));
                }
            }
        }
    }

    /// <summary>Peers' interest and import routing that is not a local subscriber never goes back out; the interest
    /// of a leaf connection we are the hub of counts as local (Go treats its LS+ like a client's SUB).</summary>
    private static bool IsLocal(Subscription subscription) =>
        subscription.Kind switch
        {
            Delivery.ReceiverKind.Remote => ((Delivery.RemotePeer)subscription.Receiver).Role == Delivery.PeerRole.HubLeaf,
            // A stream import's shadow and the exporter's `_R_.<prefix>.>` response wildcard draw messages from peers
            // (Go forwards both); a service import's stand-in does not: its requests are mapped where they are published.
            Delivery.ReceiverKind.Import => subscription.Receiver is StreamImportRoute or ResponseRoute,
            _ => true,
        };

    private void Broadcast(bool add, byte[] subject, ReadOnlySpan<byte> queue, int weight, byte[]? origin)
    {
        foreach (var route in _routes.Registered)
        {
            route.Outbound.AppendInterest(add, _account.NameUtf8, subject, queue, weight, OriginFor(route, origin));
        }
    }

    /// <summary>The origin is sent only to a peer that understands it (Go's lnoc).</summary>
    private static ReadOnlySpan<byte> OriginFor(RouteConnection route, byte[]? origin) => route.RemoteInfo is { Lnoc: true } ? origin : default;
}
