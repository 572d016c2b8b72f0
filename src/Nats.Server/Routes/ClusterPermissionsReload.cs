using Nats.Server.Protocol;

namespace Nats.Server.Routes;

/// <summary>
/// Changes of route permissions on either side of a route, as Go 2.9.10 applies them: our own by a reload
/// (reloadClusterPermissions), the peer's when its INFO says its export changed (updateRemoteRoutePerms).
/// </summary>
internal static class ClusterPermissionsReload
{
    /// <summary>
    /// Ours changed: the new permissions take effect for RS+ received at once; the peers' interest we no longer export is
    /// dropped; every route gets our new INFO, then RS+/RS- for the local interest whose import changed. Unlike Go, whose
    /// reload resends only the global account's interest, every account's is resent.
    /// </summary>
    public static void Apply(ClusterService cluster, RoutePermissions? now)
    {
        cluster.Table.Permissions = now;
        var info = cluster.RenderInfo(null);
        foreach (var route in cluster.Table.Registered)
        {
            route.ApplyPermissions(now);
            route.Outbound.Append(info);
        }
        foreach (var account in cluster.Server.Accounts)
        {
            account.SubList.FindObserver<LocalInterest>()?.Reannounce(now);
        }
    }

    /// <summary>The peer now exports what it did not: send it the interest we may import there.</summary>
    public static void PeerExportChanged(ClusterService cluster, RouteConnection route, PeerSubjectPermission? before, PeerSubjectPermission? after)
    {
        if (Same(before, after))
        {
            return;
        }
        var was = new RoutePermissions(null, ToSubjectPermission(before));
        var now = new RoutePermissions(null, ToSubjectPermission(after));
        foreach (var account in cluster.Server.Accounts)
        {
            account.SubList.FindObserver<LocalInterest>()?.ResendTo(route, subject => now.CanExport(subject) && !was.CanExport(subject));
        }
    }

    private static Auth.SubjectPermission? ToSubjectPermission(PeerSubjectPermission? p) =>
        p is null ? null : new Auth.SubjectPermission { Allow = p.Allow, Deny = p.Deny };

    private static bool Same(PeerSubjectPermission? a, PeerSubjectPermission? b) =>
        (a is null && b is null)
        || (a is not null && b is not null && (a.Allow ?? []).SequenceEqual(b.Allow ?? []) && (a.Deny ?? []).SequenceEqual(b.Deny ?? []));
}
