using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Monitoring;

/// <summary>
/// Builds /varz, /subsz, /accountz, /accstatz and the documents for features that are not
/// configured (routes, gateways, leafnodes, JetStream), answering what the Go server answers then.
/// </summary>
internal sealed class ServerDocuments(NatsServer server, ProcessUsage usage, RequestStats requestStats)
{
    // Go's default TLS timeout (seconds); reported even when TLS is not configured.
    private const double DefaultTlsTimeoutSeconds = 2;
    private const int DefaultSubListSize = 1024;

    /// <summary>Go reports the configured values (the bound port once listening) and a 2 s TLS timeout default.</summary>
    private static MqttVarz MqttVarz(Mqtt.MqttOptions mqtt, int boundPort) => !mqtt.Enabled ? new MqttVarz() : new MqttVarz
    {
        Host = mqtt.Host,
        Port = boundPort != 0 ? boundPort : mqtt.Port,
        NoAuthUser = mqtt.NoAuthUser,
        AuthTimeout = mqtt.AuthTimeout.TotalSeconds,
        TlsTimeout = DefaultTlsTimeoutSeconds,
        JsDomain = mqtt.JsDomain,
        AckWait = mqtt.AckWait.Ticks * 100,
        MaxAckPending = mqtt.MaxAckPending,
    };

    public Varz Varz()
    {
        var options = server.Options;
        var (rss, cpu) = usage.Sample();
        var now = DateTime.UtcNow;
        var traffic = TrafficSnapshot(null);
        return new Varz
        {
            ServerId = server.ServerId,
            ServerName = server.ServerName,
            Version = NatsServer.FeatureLevelVersion,
            Proto = 1,
            Go = "dotnet" + Environment.Version,
            Host = options.Host,
            Port = server.Port,
            AuthRequired = server.AuthRequired,
            MaxConnections = options.MaxConnections,
            MaxSubscriptions = options.MaxSubscriptions,
            PingInterval = Nanoseconds(options.PingInterval),
            PingMax = options.MaxPingsOut,
            HttpHost = string.IsNullOrEmpty(options.HttpHost) ? options.Host : options.HttpHost,
            HttpPort = options.HttpPort,
            HttpsPort = options.HttpsPort,
            Websocket = options.WebSocket is { Port: not 0 } ws ? new WebsocketVarz
            {
                Host = string.IsNullOrEmpty(ws.Host) ? null : ws.Host,
                Port = server.WebSocketPort,
                Advertise = ws.Advertise,
                NoAuthUser = ws.NoAuthUser,
                JwtCookie = ws.JwtCookie,
                HandshakeTimeout = (long)(ws.HandshakeTimeout.Ticks * 100),
                AuthTimeout = ws.AuthTimeoutSeconds,
                NoTls = ws.NoTls,
                TlsMap = ws.Tls?.Map == true,
                SameOrigin = ws.SameOrigin,
                AllowedOrigins = ws.AllowedOrigins,
                Compression = ws.Compression,
            } : new WebsocketVarz(),
            AuthTimeout = options.AuthTimeout.TotalSeconds,
            MaxControlLine = options.MaxControlLine,
            MaxPayload = options.MaxPayload,
            MaxPending = options.MaxPending,
            TlsTimeout = options.Tls?.EffectiveTimeoutSeconds ?? DefaultTlsTimeoutSeconds,
            TlsRequired = options.TlsContext is not null,
            TlsVerify = options.TlsContext?.Verify == true,
            Mqtt = MqttVarz(options.Mqtt, server.MqttPort),
            Cluster = server.Cluster is { } cluster ? new ClusterVarz
            {
                Name = cluster.ClusterName,
                Host = string.IsNullOrEmpty(options.Cluster.Host) ? null : options.Cluster.Host,
                Port = cluster.Port,
                AuthTimeout = options.Cluster.AuthTimeout.TotalSeconds,
                Urls = options.Cluster.Routes.Count == 0 ? null : options.Cluster.Routes.Select(u => u.Authority).ToList(),
            } : new ClusterVarz(),
            Leaf = LeafVarz(options.LeafNodes, server.LeafNodePort),
            Gateway = GatewayzBuilder.Varz(server),
            OutboundGateways = server.Gateways?.Outbound.Length ?? 0,
            InboundGateways = server.Gateways?.Inbound.Length ?? 0,
            Routes = server.RouteCount,
            LeafNodes = server.LeafNodeCount,
            WriteDeadline = Nanoseconds(options.WriteDeadline),
            Start = server.StartTime,
            Now = now,
            Uptime = GoFormat.Uptime(now - server.StartTime),
            Mem = rss,
            Cores = Environment.ProcessorCount,
            MaxProcs = Environment.ProcessorCount,
            Cpu = cpu,
            Connections = server.ClientCount,
            TotalConnections = server.TotalConnections,
            InMsgs = traffic.InMsgs,
            OutMsgs = traffic.OutMsgs,
            InBytes = traffic.InBytes,
            OutBytes = traffic.OutBytes,
            SlowConsumers = server.SlowConsumers,
            Subscriptions = server.Accounts.Sum(a => (long)a.VisibleSubscriptionCount),
            HttpReqStats = requestStats.Snapshot(),
            ConfigLoadTime = server.ConfigLoadTime,
            HttpBasePath = options.HttpBasePath ?? "",
            SystemAccount = server.SystemAccount?.Name,
        };
    }

    /// <summary>Returns the document (a full Subsz, or just the stats when no list is shown), or null and the 400 text.</summary>
    public object? Subsz(bool subs, int offset, int limit, string test, string account, out string error)
    {
        var document = SubszDocument(subs, offset, limit, test, account, out error);
        // Over HTTP Go writes only the statistics when no list is shown.
        return document is null ? null : document.SubscriptionsList is null ? document.Stats : document;
    }

    /// <summary>Go's Server.Subsz: the full document, without a list when none was asked for or the page came out empty.</summary>
    public Subsz? SubszDocument(bool subs, int offset, int limit, string test, string account, out string error)
    {
        error = "";
        offset = Math.Max(0, offset);
        limit = limit <= 0 ? DefaultSubListSize : limit;
        if (test.Length > 0 && !SubjectRules.IsValidLiteral(test))
        {
            error = $"invalid test subject, must be valid publish subject: {test}";
            return null;
        }
        var accounts = server.Accounts.Where(a => account.Length == 0 || a.Name == account).ToList();
        var stats = new SubListStatsModel();
        foreach (var acc in accounts)
        {
            stats.Add(Stats(acc.SubList));
        }
        var document = new Subsz
        {
            ServerId = server.ServerId,
            Now = DateTime.UtcNow,
            Stats = stats,
            NumSubscriptions = stats.NumSubscriptions,
            NumCache = stats.NumCache,
            NumInserts = stats.NumInserts,
            NumRemoves = stats.NumRemoves,
            NumMatches = stats.NumMatches,
            CacheHitRate = stats.CacheHitRate,
            MaxFanout = stats.MaxFanout,
            AvgFanout = stats.AvgFanout,
            Offset = offset,
            Limit = limit,
        };
        if (!subs)
        {
            return document;
        }
        var testBytes = Encoding.UTF8.GetBytes(test);
        var details = new List<SubDetail>();
        foreach (var acc in accounts)
        {
            foreach (var subscription in acc.SubList.All())
            {
                if (test.Length > 0 && !SubjectRules.Matches(testBytes, subscription.Subject))
                {
                    continue;
                }
                details.Add(ConnectionSnapshot.Detail(subscription, acc.Name));
            }
        }
        var start = Math.Min(offset, details.Count);
        var end = (int)Math.Min((long)offset + limit, details.Count);
        var page = details.GetRange(start, end - start);
        if (page.Count > 0)
        {
            // Go reports the size of the returned page as "total", not the number of matches.
            document.Total = page.Count;
            document.SubscriptionsList = page;
        }
        return document;
    }

    public Accountz? Accountz(string account, out string error)
    {
        error = "";
        var result = new Accountz { ServerId = server.ServerId, Now = DateTime.UtcNow, SystemAccount = server.SystemAccount?.Name };
        if (account.Length == 0)
        {
            result.Accounts = server.Accounts.Select(a => a.Name).ToList();
            return result;
        }
        var acc = server.Accounts.FirstOrDefault(a => a.Name == account);
        if (acc is null)
        {
            error = $"Account {account} does not exist";
            return null;
        }
        result.AccountDetail = new AccountInfo
        {
            AccountName = acc.Name,
            UpdateTime = server.StartTime,
            IsSystem = acc.IsSystem,
            ClientConnections = ConnectionsIn(acc),
            Subscriptions = acc.VisibleSubscriptionCount,
            Mappings = MappingsOf(acc),
            SublistStats = Stats(acc.SubList),
        };
        AccountImportExportDocuments.Fill(result.AccountDetail, acc, server.SystemAccount, Accounts.JetStreamApiImport.Applies(server.Options));
        return result;
    }

    /// <summary>Go lists each source's destinations (cumulative weights), then cluster-scoped ones; omitted when empty.</summary>
    private static SortedDictionary<string, List<MapDestModel>>? MappingsOf(Accounts.Account account)
    {
        if (account.Mappings is not { } mapper)
        {
            return null;
        }
        var result = new SortedDictionary<string, List<MapDestModel>>(StringComparer.Ordinal);
        foreach (var entry in mapper.Entries)
        {
            var list = entry.Destinations
                .Select(d => new MapDestModel { Subject = d.Transform.Destination, Weight = d.CumulativeWeight })
                .ToList();
            foreach (var (cluster, destinations) in entry.ClusterDestinations)
            {
                list.AddRange(destinations.Select(d => new MapDestModel
                {
                    Subject = d.Transform.Destination,
                    Weight = d.CumulativeWeight,
                    Cluster = cluster,
                }));
            }
            result[entry.Source] = list;
        }
        return result;
    }

    public AccountStatz AccountStatz(bool includeUnused)
    {
        var result = new AccountStatz { ServerId = server.ServerId, Now = DateTime.UtcNow };
        foreach (var acc in server.Accounts)
        {
            var conns = ConnectionsIn(acc);
            if (!includeUnused && conns == 0)
            {
                continue;
            }
            var traffic = TrafficSnapshot(acc.Name);
            result.Accounts.Add(new AccountStat
            {
                Account = acc.Name,
                Conns = conns,
                LeafNodes = acc.LeafCount,
                TotalConns = conns + acc.LeafCount,
                Received = new DataStats { Msgs = traffic.InMsgs, Bytes = traffic.InBytes },
                Sent = new DataStats { Msgs = traffic.OutMsgs, Bytes = traffic.OutBytes },
                SlowConsumers = traffic.SlowConsumers,
            });
        }
        return result;
    }

    /// <summary>One account's statz as the system account's connection events report it (Go's Account.statz).</summary>
    public AccountStat AccountStatFor(Account account)
    {
        var conns = account.ClientCount;
        var traffic = TrafficSnapshot(account.Name);
        return new AccountStat
        {
            Account = account.Name,
            Conns = conns,
            LeafNodes = account.LeafCount,
            TotalConns = conns + account.LeafCount,
            Received = new DataStats { Msgs = traffic.InMsgs, Bytes = traffic.InBytes },
            Sent = new DataStats { Msgs = traffic.OutMsgs, Bytes = traffic.OutBytes },
            SlowConsumers = traffic.SlowConsumers,
        };
    }

    /// <summary>Go's Routez: one entry per registered route; <paramref name="subs"/> lists each route's
    /// subjects, <paramref name="detail"/> their details.</summary>
    public Routez Routez(bool subs = false, bool detail = false)
    {
        var now = DateTime.UtcNow;
        var routez = new Routez { ServerId = server.ServerId, Now = now };
        if (server.Cluster is not { } cluster)
        {
            return routez;
        }
        foreach (var route in cluster.Table.Registered)
        {
            var idle = TimeSpan.FromMilliseconds(Math.Max(0, Environment.TickCount64 - Volatile.Read(ref route.Link.LastActivityTicks)));
            var entry = new RoutezRoute
            {
                Rid = route.Id,
                RemoteId = route.RemoteId,
                DidSolicit = route.Solicited,
                IsConfigured = route.IsConfigured,
                Ip = route.RemoteIp,
                Port = route.RemotePort,
                Start = route.Start,
                LastActivity = now - idle,
                Rtt = GoFormat.Duration(route.Rtt),
                Uptime = GoFormat.Uptime(now - route.Start),
                Idle = GoFormat.Uptime(idle),
                Pending = (int)Math.Min(route.Outbound.Pending, int.MaxValue),
                InMsgs = Volatile.Read(ref route.Link.InMsgs),
                OutMsgs = Volatile.Read(ref route.Outbound.OutMsgs),
                InBytes = Volatile.Read(ref route.Link.InBytes),
                OutBytes = Volatile.Read(ref route.Outbound.OutBytes),
                NumSubs = route.SubscriptionCount,
            };
            if (entry.NumSubs > 0 && (subs || detail))
            {
                var list = route.Interest.Snapshot();
                if (detail)
                {
                    entry.SubsDetail = list.Select(s => new SubDetail { Account = s.Account, Subject = s.Subject, Queue = s.Queue, Sid = s.Subject, Cid = route.Id }).ToList();
                }
                else
                {
                    entry.Subs = list.Select(s => s.Subject).ToList();
                }
            }
            routez.Routes.Add(entry);
        }
        routez.NumRoutes = routez.Routes.Count;
        return routez;
    }

    public Gatewayz Gatewayz(bool accounts = false, string? gatewayName = null, string? accountName = null) =>
        GatewayzBuilder.Build(server, accounts, gatewayName, accountName);

    /// <summary>Go's Leafz: every leaf connection past its handshake, optionally of one account, with its interest list.</summary>
    public Leafz Leafz(bool subs = false, string? account = null)
    {
        var leafz = new Leafz { ServerId = server.ServerId, Now = DateTime.UtcNow };
        if (server.LeafNodes is not { } leafNodes)
        {
            return leafz;
        }
        foreach (var leaf in leafNodes.Registered)
        {
            if (!string.IsNullOrEmpty(account) && leaf.Account?.Name != account)
            {
                continue;
            }
            var entry = new LeafzEntry
            {
                Account = leaf.Account?.Name ?? "",
                Ip = leaf.RemoteIp,
                Port = leaf.RemotePort,
                Rtt = GoFormat.Duration(leaf.Rtt),
                InMsgs = Volatile.Read(ref leaf.Link.InMsgs),
                OutMsgs = Volatile.Read(ref leaf.Outbound.OutMsgs),
                InBytes = Volatile.Read(ref leaf.Link.InBytes),
                OutBytes = Volatile.Read(ref leaf.Outbound.OutBytes),
                NumSubs = leaf.SubscriptionCount,
            };
            if (subs)
            {
                entry.Subs = leaf.Interest.Snapshot().Select(s => s.Subject).ToList();
            }
            (leafz.Leafs ??= []).Add(entry);
        }
        leafz.NumLeafs = leafz.Leafs?.Count ?? 0;
        return leafz;
    }

    private static LeafVarz LeafVarz(LeafNodes.LeafNodeOptions leaf, int port)
    {
        if (!leaf.Enabled)
        {
            return new LeafVarz();
        }
        return new LeafVarz
        {
            Host = string.IsNullOrEmpty(leaf.Host) ? null : leaf.Host,
            Port = port,
            AuthTimeout = leaf.AuthTimeout.TotalSeconds,
            // Go's default TLS timeout, shown even without TLS.
            TlsTimeout = 2,
            Remotes = leaf.Remotes.Count == 0 ? null : leaf.Remotes.Select(r => new LeafRemoteVarz
            {
                LocalAccount = string.IsNullOrEmpty(r.LocalAccount) ? null : r.LocalAccount,
                Urls = r.Urls.Select(u => u.Authority).ToList(),
                Deny = r.DenyImports.Count + r.DenyExports.Count == 0 ? null : new LeafDenyVarz
                {
                    Exports = r.DenyExports.Count == 0 ? null : r.DenyExports,
                    Imports = r.DenyImports.Count == 0 ? null : r.DenyImports,
                },
            }).ToList(),
        };
    }

    /// <summary>Go's Jsz: with a meta group its <c>meta_cluster</c>, and leader_only answered by its leader alone
    /// (a standalone server has no leader); account details are not listed yet.</summary>
    public Jsz? Jsz(bool leaderOnly, out string error)
    {
        error = "";
        if (leaderOnly && server.JetStream?.Meta is not { IsLeader: true })
        {
            error = "filtered response: not leader";
            return null;
        }
        if (server.JetStream is not { } js)
        {
            return new Jsz { ServerId = server.ServerId, Now = DateTime.UtcNow, Disabled = true };
        }
        var totals = js.Totals();
        return new Jsz
        {
            ServerId = server.ServerId,
            Now = DateTime.UtcNow,
            Config = new JetStreamConfigModel
            {
                MaxMemory = totals.MaxMemory,
                MaxStorage = totals.MaxStore,
                StoreDir = js.StoreDirectory,
                Domain = string.IsNullOrEmpty(js.Options.Domain) ? null : js.Options.Domain,
            },
            Memory = totals.Memory,
            Storage = totals.Storage,
            Accounts = totals.Accounts,
            HaAssets = js.RaftGroups,
            Api = new JetStreamApiStats { Total = totals.ApiTotal, Errors = totals.ApiErrors },
            Streams = totals.Streams,
            Consumers = totals.Consumers,
            Messages = totals.Messages,
            Bytes = totals.Bytes,
            Meta = js.Meta?.Info(),
            StoreDamage = js.Damage.Events == 0 && totals.LostMessages == 0 && js.Damage.Failures == 0 ? null : new StoreDamageStats
            {
                Events = js.Damage.Events,
                LostMessages = totals.LostMessages,
                LostBytes = totals.LostBytes,
                StoreFailures = js.Damage.Failures,
            },
        };
    }

    public HealthStatus Healthz() => server.IsReadyForConnections
        ? new HealthStatus()
        : new HealthStatus
        {
            Status = "error",
            // In lame duck mode Go's check fails on the closed client listener, which it names "server".
            Error = server.IsLameDuckMode
                ? "failed to be ready for connections after 1ms: server"
                : "failed to be ready for connections after 1ms: startup did not complete",
        };

    internal static SubListStatsModel Stats(SubList subList)
    {
        var raw = subList.GetStats();
        var fanout = subList.GetFanoutStats();
        return new SubListStatsModel
        {
            NumSubscriptions = raw.Subscriptions,
            NumCache = raw.CacheEntries,
            NumInserts = raw.Inserts,
            NumRemoves = raw.Removes,
            NumMatches = raw.Matches,
            CacheHits = raw.CacheHits,
            CacheHitRate = raw.Matches > 0 ? (double)raw.CacheHits / raw.Matches : 0,
            MaxFanout = fanout.MaxFanout,
            TotalFanout = fanout.TotalFanout,
            CachedResults = fanout.CachedResults,
            AvgFanout = fanout.TotalFanout > 0 ? (double)fanout.TotalFanout / fanout.CachedResults : 0,
        };
    }

    private int ConnectionsIn(Account account) => server.Clients.Count(c => c.Account == account && !c.IsClosed);

    /// <summary>Closed totals plus the live connections' counters, read under the history lock so nothing is counted twice.</summary>
    private TrafficTotals TrafficSnapshot(string? account)
    {
        var sum = new TrafficTotals();
        lock (server.History.SyncRoot)
        {
            var closed = account is null ? server.History.Closed : server.History.AccountTotalsLocked(account);
            sum.InMsgs = closed.InMsgs;
            sum.InBytes = closed.InBytes;
            sum.OutMsgs = closed.OutMsgs;
            sum.OutBytes = closed.OutBytes;
            sum.SlowConsumers = closed.SlowConsumers;
            foreach (var client in server.Clients)
            {
                if (account is not null && client.Account.Name != account)
                {
                    continue;
                }
                sum.InMsgs += Volatile.Read(ref client.InMsgs);
                sum.InBytes += Volatile.Read(ref client.InBytes);
                sum.OutMsgs += client.OutMsgs;
                sum.OutBytes += client.OutBytes;
            }
        }
        return sum;
    }

    private static long Nanoseconds(TimeSpan span) => span.Ticks * 100;
}
