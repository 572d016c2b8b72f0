using Nats.Server.Gateways;
using Nats.Server.Hosting;

namespace Nats.Server.Monitoring;

/// <summary>Go's Gatewayz: this gateway, its outbound connection per remote cluster and its inbound ones grouped by
/// cluster, each account's interest mode with <c>accs=1</c> (or <c>acc_name</c>), one remote with <c>gw_name</c>.</summary>
internal static class GatewayzBuilder
{
    // Go's gatewayMaxRUnsubBeforeSwitch, reported as each account's threshold.
    private const int InterestOnlyThreshold = 1000;

    public static Gatewayz Build(NatsServer server, bool accounts, string? gatewayName, string? accountName)
    {
        var now = DateTime.UtcNow;
        var gatewayz = new Gatewayz { ServerId = server.ServerId, Now = now };
        if (server.Gateways is not { } gateways)
        {
            return gatewayz;
        }
        var (host, port) = gateways.Advertised;
        gatewayz.Name = gateways.Name;
        gatewayz.Host = host;
        gatewayz.Port = port;
        accounts |= !string.IsNullOrEmpty(accountName);
        if (!string.IsNullOrEmpty(gatewayName))
        {
            var outbound = gateways.Outbound.FirstOrDefault(c => c.Name == gatewayName);
            gatewayz.OutboundGateways = outbound is null ? null : new() { [gatewayName] = Remote(outbound, now, accounts, accountName, gateways) };
        }
        else
        {
            foreach (var outbound in gateways.Outbound)
            {
                gatewayz.OutboundGateways![outbound.Name] = Remote(outbound, now, accounts, accountName, gateways);
            }
        }
        foreach (var inbound in gateways.Inbound)
        {
            if (!string.IsNullOrEmpty(gatewayName) && inbound.Name != gatewayName)
            {
                continue;
            }
            if (!gatewayz.InboundGateways.TryGetValue(inbound.Name, out var list))
            {
                gatewayz.InboundGateways[inbound.Name] = list = [];
            }
            list.Add(Remote(inbound, now, accounts, accountName, gateways));
        }
        return gatewayz;
    }

    /// <summary>Go's GatewayOptsVarz: the options, each remote with the URLs known for it now (configured and learned).</summary>
    public static GatewayVarz Varz(NatsServer server)
    {
        var options = server.Options.Gateway;
        if (server.Gateways is not { } gateways)
        {
            return new GatewayVarz();
        }
        var remotes = gateways.Remotes.ToDictionary(r => r.Name);
        return new GatewayVarz
        {
            Name = options.Name,
            Host = string.IsNullOrEmpty(options.Host) ? null : options.Host,
            Port = gateways.Port,
            AuthTimeout = options.AuthTimeout.TotalSeconds,
            // Go's default TLS timeout, shown even without TLS.
            TlsTimeout = 2,
            Advertise = string.IsNullOrEmpty(options.Advertise) ? null : options.Advertise,
            ConnectRetries = options.ConnectRetries,
            RejectUnknown = options.RejectUnknown,
            Gateways = options.Gateways.Count == 0 ? null : options.Gateways.Select(g => new GatewayRemoteVarz
            {
                Name = g.Name,
                Urls = (remotes.TryGetValue(g.Name, out var state) ? state.Urls : g.Urls).Select(u => u.Authority).ToList(),
            }).ToList(),
        };
    }

    private static RemoteGatewayz Remote(GatewayConnection connection, DateTime now, bool accounts, string? accountName, GatewayService gateways)
    {
        var link = connection.Link;
        var idle = TimeSpan.FromMilliseconds(Math.Max(0, Environment.TickCount64 - Volatile.Read(ref link.LastActivityTicks)));
        var remote = new RemoteGatewayz
        {
            IsConfigured = connection.Remote is { Implicit: false },
            Connection = new GatewayConnInfo
            {
                Cid = connection.Id,
                Ip = link.RemoteIp,
                Port = link.RemotePort,
                Start = link.Start,
                LastActivity = now - idle,
                Rtt = GoFormat.Duration(link.Rtt),
                Uptime = GoFormat.Uptime(now - link.Start),
                Idle = GoFormat.Uptime(idle),
                PendingBytes = link.Outbound.Pending,
                InMsgs = Volatile.Read(ref link.InMsgs),
                OutMsgs = Volatile.Read(ref link.Outbound.OutMsgs),
                InBytes = Volatile.Read(ref link.InBytes),
                OutBytes = Volatile.Read(ref link.Outbound.OutBytes),
                Subscriptions = connection.SubscriptionCount,
                Name = string.IsNullOrEmpty(connection.RemoteId) ? null : connection.RemoteId,
            },
        };
        if (accounts)
        {
            remote.Accounts = connection.IsOutbound ? OutboundAccounts(connection, accountName) : InboundAccounts(connection, accountName, gateways);
        }
        return remote;
    }

    private static List<AccountGatewayz>? OutboundAccounts(GatewayConnection connection, string? accountName)
    {
        var subscriptions = connection.Interest.Snapshot();
        var list = new List<AccountGatewayz>();
        foreach (var name in connection.InterestOnlyAccounts)
        {
            if (!string.IsNullOrEmpty(accountName) && name != accountName)
            {
                continue;
            }
            var own = subscriptions.Where(s => s.Account == name).ToList();
            list.Add(new AccountGatewayz
            {
                Name = name,
                InterestMode = "Interest-Only",
                InterestOnlyThreshold = InterestOnlyThreshold,
                TotalSubscriptions = own.Count,
                NumQueueSubscriptions = own.Count(s => s.Queue is not null),
            });
        }
        return list.Count == 0 && !string.IsNullOrEmpty(accountName) ? null : list;
    }

    private static List<AccountGatewayz>? InboundAccounts(GatewayConnection connection, string? accountName, GatewayService gateways)
    {
        var list = new List<AccountGatewayz>();
        foreach (var name in gateways.InterestOnlyAccounts(connection))
        {
            if (string.IsNullOrEmpty(accountName) || name == accountName)
            {
                list.Add(new AccountGatewayz { Name = name, InterestMode = "Interest-Only", InterestOnlyThreshold = InterestOnlyThreshold });
            }
        }
        return list.Count == 0 && !string.IsNullOrEmpty(accountName) ? null : list;
    }
}
