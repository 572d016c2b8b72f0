using Nats.Server.Hosting;

namespace Nats.Server.Monitoring;

internal enum ConnState
{
    Open,
    Closed,
    Any,
}

internal sealed record ConnzOptions(
    string Sort,
    bool Auth,
    bool Subs,
    bool SubsDetail,
    int Offset,
    int Limit,
    ulong Cid,
    ConnState State,
    string User,
    string Account);

/// <summary>
/// /connz with the Go server's semantics (Server.Connz in monitor.go), quirks included: "total" is
/// counted before user filtering and before a cid lookup, a cid lookup with state=any only searches
/// the closed ring, and only sort=cid is ascending apart from uptime and reason.
/// </summary>
internal static class ConnzBuilder
{
    public const int DefaultLimit = 1024;

    private static readonly HashSet<string> SortOptions = new(StringComparer.Ordinal)
    {
        "", "cid", "start", "subs", "pending", "msgs_to", "msgs_from", "bytes_to", "bytes_from",
        "last", "idle", "uptime", "stop", "reason",
    };

    /// <summary>Returns the document, or null and the 400 text.</summary>
    public static Connz? Build(NatsServer server, ConnzOptions options, out string error)
    {
        error = "";
        var sort = options.Sort;
        if (!SortOptions.Contains(sort))
        {
            error = $"invalid sorting option: {sort}";
            return null;
        }
        if (sort == "")
        {
            sort = "cid";
        }
        var offset = Math.Max(0, options.Offset);
        var limit = options.Limit <= 0 ? DefaultLimit : options.Limit;
        var state = options.State;
        if (sort == "stop" && state != ConnState.Closed)
        {
            error = "sort by stop only valid on closed connections";
            return null;
        }
        if (sort == "reason" && state != ConnState.Closed)
        {
            error = "sort by reason only valid on closed connections";
            return null;
        }
        if (options.Cid > 0)
        {
            limit = 1;
        }

        var now = DateTime.UtcNow;
        var connz = new Connz { Offset = offset, Limit = limit, Now = now };
        var account = options.Account;
        if (account.Length > 0 && !server.Accounts.Any(a => a.Name == account))
        {
            // Go returns before filling in anything else, server id included.
            connz.Connections = null;
            return connz;
        }
        connz.ServerId = server.ServerId;

        var open = server.Clients.Where(c => account.Length == 0 || c.Account.Name == account).ToList();
        var mqtt = server.Mqtt is { } mqttServer && state is ConnState.Open or ConnState.Any
            ? mqttServer.Connections.Where(c => (account.Length == 0 || c.AccountName == account)
                && (options.Cid == 0 || c.Id == options.Cid) && (options.User.Length == 0 || c.User == options.User)).ToList()
            : [];
        List<ClosedConnection> closed = [];
        if (state is ConnState.Closed or ConnState.Any)
        {
            closed = server.History.Snapshot();
        }
        connz.Total = state switch
        {
            ConnState.Open => open.Count,
            ConnState.Closed => closed.Count,
            _ => open.Count + closed.Count,
        } + mqtt.Count;
        if (account.Length > 0 && closed.Count > 0)
        {
            var before = closed.Count;
            closed = closed.Where(c => c.Account == account).ToList();
            connz.Total -= before - closed.Count;
        }

        var selectedOpen = new List<Clients.ClientConnection>();
        if (options.Cid > 0)
        {
            if (state is ConnState.Closed or ConnState.Any)
            {
                closed = closed.Where(c => c.Info.Cid == options.Cid).Take(1).ToList();
            }
            else
            {
                selectedOpen.AddRange(open.Where(c => c.Id == options.Cid));
            }
        }
        else if (state is ConnState.Open or ConnState.Any)
        {
            selectedOpen.AddRange(open.Where(c => options.User.Length == 0 || c.RawAuthUser == options.User));
        }

        if (selectedOpen.Count == 0 && closed.Count == 0 && mqtt.Count == 0)
        {
            return connz;
        }

        var infos = new List<ConnInfo>(selectedOpen.Count + closed.Count + mqtt.Count);
        foreach (var connection in mqtt)
        {
            infos.Add(Mqtt.MqttMonitoring.Capture(connection, now, options.Auth));
        }
        foreach (var client in selectedOpen)
        {
            var info = ConnectionSnapshot.Capture(client, now);
            if (options.SubsDetail || options.Subs)
            {
                var subscriptions = client.SnapshotSubscriptions();
                if (subscriptions.Count > 0)
                {
                    if (options.SubsDetail)
                    {
                        info.SubscriptionsListDetail = subscriptions.Select(s => ConnectionSnapshot.Detail(s, null)).ToList();
                    }
                    else
                    {
                        info.SubscriptionsList = subscriptions.Select(s => s.SubjectString).ToList();
                    }
                }
            }
            if (options.Auth)
            {
                info.AuthorizedUser = client.RawAuthUser;
                info.Account = ConnectionSnapshot.VisibleAccount(client.Account.Name);
                // Go fills these for open connections only (its closed records are made without auth).
                info.TlsPeerCerts = TlsPeerCert.From(client.TlsState?.PeerCertificate);
            }
            infos.Add(info);
        }
        foreach (var entry in closed)
        {
            if (options.User.Length > 0 && entry.User != options.User)
            {
                continue;
            }
            // The ring's record is shared: decorate a copy.
            var info = entry.Info.ShallowCopy();
            if (entry.Subscriptions.Length > 0)
            {
                if (options.SubsDetail)
                {
                    info.SubscriptionsListDetail = [.. entry.Subscriptions];
                }
                else if (options.Subs)
                {
                    info.SubscriptionsList = entry.Subscriptions.Select(s => s.Subject).ToList();
                }
            }
            if (options.Auth)
            {
                info.AuthorizedUser = entry.User;
                info.Account = ConnectionSnapshot.VisibleAccount(entry.Account);
            }
            infos.Add(info);
        }

        Sort(infos, sort, now);
        var start = Math.Min(offset, infos.Count);
        var end = (int)Math.Min((long)offset + limit, infos.Count);
        connz.Connections = infos.GetRange(start, Math.Max(0, end - start));
        connz.NumConnections = connz.Connections.Count;
        return connz;
    }

    private static void Sort(List<ConnInfo> infos, string sort, DateTime now)
    {
        // Ties keep cid order (Go's sort is unstable, so any tie order is valid there).
        Comparison<ConnInfo> byCid = (a, b) => a.Cid.CompareTo(b.Cid);
        Comparison<ConnInfo> comparison = sort switch
        {
            "subs" => Descending(c => c.Subscriptions),
            "pending" => Descending(c => c.PendingBytes),
            "msgs_to" => Descending(c => c.OutMsgs),
            "msgs_from" => Descending(c => c.InMsgs),
            "bytes_to" => Descending(c => c.OutBytes),
            "bytes_from" => Descending(c => c.InBytes),
            "last" => Descending(c => c.LastActivity.Ticks),
            // Go's byIdle compares last activity minus start, not now minus last activity.
            "idle" => Descending(c => (c.LastActivity - c.Start).Ticks),
            "uptime" => (a, b) => UptimeOf(a, now).CompareTo(UptimeOf(b, now)),
            "stop" => Descending(c => c.Stop?.Ticks ?? 0),
            "reason" => (a, b) => string.CompareOrdinal(a.Reason, b.Reason),
            _ => byCid,
        };
        var ordered = infos.Order(Comparer<ConnInfo>.Create((a, b) =>
        {
            var result = comparison(a, b);
            return result != 0 ? result : byCid(a, b);
        })).ToList();
        infos.Clear();
        infos.AddRange(ordered);
    }

    private static Comparison<ConnInfo> Descending(Func<ConnInfo, long> key) => (a, b) => key(b).CompareTo(key(a));

    private static long UptimeOf(ConnInfo info, DateTime now) => ((info.Stop ?? now) - info.Start).Ticks;
}
