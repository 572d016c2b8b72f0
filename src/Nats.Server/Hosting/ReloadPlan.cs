using System.Globalization;
using System.Text;
using Nats.Server.Auth;
using Nats.Server.Configuration;

namespace Nats.Server.Hosting;

/// <summary>What applying one changed setting involves (Go's option kinds in reload.go).</summary>
internal enum ReloadEffect
{
    /// <summary>Only logged: the value is read from the options where it is used.</summary>
    None,
    Logging,
    TraceLevel,
    Authorization,
    MaxConnections,
    PidFile,
    PortsFileDir,
    Cluster,
    Routes,
    PinnedCerts,
}

/// <summary>One changed setting: the "Reloaded: ..." line and what has to be done for it.</summary>
internal sealed record ReloadChange(ReloadEffect Effect, string Message);

/// <summary>
/// Compares running and new options the way the Go server's diffOptions does: field by field in the
/// order of Go's Options struct (so the first refused field and the order of "Reloaded:" lines match),
/// refusing what Go cannot reload with its "config reload not supported for Field: old=..., new=..."
/// text. Like Go, the users list and accounts always count as changed.
/// </summary>
internal static class ReloadPlan
{
    /// <summary>Returns the changes, or null with the error when some setting cannot be reloaded.</summary>
    public static List<ReloadChange>? Diff(ServerOptions old, ServerOptions neu, int boundPort, out string? error)
    {
        error = null;
        var changes = new List<ReloadChange>();
        try
        {
            Refuse("ServerName", old.ServerName ?? "", neu.ServerName ?? "");
            Refuse("Host", old.Host, neu.Host);
            if (neu.Port != old.Port)
            {
                // Go compares against the port actually bound when the configured one was random.
                Refuse("Port", old.Port == 0 ? boundPort : old.Port, neu.Port);
            }
            if (old.ClientAdvertise != neu.ClientAdvertise)
            {
                changes.Add(new(ReloadEffect.None, $"Reload: client_advertise = {neu.ClientAdvertise}"));
            }
            Logging(changes, ReloadEffect.TraceLevel, "trace", old.Trace, neu.Trace);
            Logging(changes, ReloadEffect.Logging, "debug", old.Debug, neu.Debug);
            Logging(changes, ReloadEffect.TraceLevel, "trace_verbose", old.TraceVerbose, neu.TraceVerbose);
            Refuse("NoHeaderSupport", old.NoHeaderSupport, neu.NoHeaderSupport);
            Logging(changes, ReloadEffect.Logging, "logtime", old.Logtime, neu.Logtime);
            // logtime_utc arrived in Go 2.10, where it is a logging option like logtime.
            Logging(changes, ReloadEffect.Logging, "logtime_utc", old.LogtimeUtc, neu.LogtimeUtc);
            if (old.MaxConnections != neu.MaxConnections)
            {
                changes.Add(new(ReloadEffect.MaxConnections, $"Reloaded: max_connections = {neu.MaxConnections}"));
            }
            Refuse("MaxSubs", old.MaxSubscriptions, neu.MaxSubscriptions);
            if (Canonical(old.Nkeys, old.DefaultPermissions) != Canonical(neu.Nkeys, neu.DefaultPermissions))
            {
                changes.Add(new(ReloadEffect.Authorization, "Reloaded: authorization nkey users"));
            }
            // Go never finds users and accounts equal (they hold live state), so these always reload.
            changes.Add(new(ReloadEffect.Authorization, "Reloaded: authorization users"));
            changes.Add(new(ReloadEffect.Authorization, "Reloaded: accounts"));
            if ((old.NoAuthUser ?? "") != (neu.NoAuthUser ?? ""))
            {
                // Go only lets no_auth_user go away together with the user it named.
                var removedWithUser = !string.IsNullOrEmpty(old.NoAuthUser) && string.IsNullOrEmpty(neu.NoAuthUser)
                    && !(neu.Users ?? []).Any(u => u.Username == old.NoAuthUser);
                if (!removedWithUser)
                {
                    Refuse("NoAuthUser", old.NoAuthUser ?? "", neu.NoAuthUser ?? "");
                }
            }
            if ((old.Username ?? "") != (neu.Username ?? ""))
            {
                changes.Add(new(ReloadEffect.Authorization, "Reloaded: authorization username"));
            }
            if ((old.Password ?? "") != (neu.Password ?? ""))
            {
                changes.Add(new(ReloadEffect.Authorization, "Reloaded: authorization password"));
            }
            if ((old.AuthToken ?? "") != (neu.AuthToken ?? ""))
            {
                changes.Add(new(ReloadEffect.Authorization, "Reloaded: authorization token"));
            }
            if (old.PingInterval != neu.PingInterval)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: ping_interval = {GoDuration.Format(neu.PingInterval)}"));
            }
            if (old.MaxPingsOut != neu.MaxPingsOut)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: ping_max = {neu.MaxPingsOut}"));
            }
            Refuse("HTTPHost", old.HttpHost ?? "", neu.HttpHost ?? "");
            Refuse("HTTPPort", old.HttpPort, neu.HttpPort);
            Refuse("HTTPBasePath", old.HttpBasePath ?? "", neu.HttpBasePath ?? "");
            if (old.AuthTimeout != neu.AuthTimeout)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: authorization timeout = {GoFloat(neu.AuthTimeout.TotalSeconds)}"));
            }
            if (old.MaxControlLine != neu.MaxControlLine)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: max_control_line = {neu.MaxControlLine}"));
            }
            if (old.MaxPayload != neu.MaxPayload)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: max_payload = {neu.MaxPayload}"));
            }
            Refuse("MaxPending", old.MaxPending, neu.MaxPending);
            Cluster(changes, old.Cluster, neu.Cluster);
            // Go reloads neither block (beyond their TLS certificates) and refuses any other change.
            Refuse("Gateway", GatewayIdentity(old.Gateway), GatewayIdentity(neu.Gateway));
            Refuse("LeafNode", LeafIdentity(old.LeafNodes), LeafIdentity(neu.LeafNodes));
            // Go refuses any websocket change other than its TLS certificates.
            Refuse("Websocket", WebSocketIdentity(old), WebSocketIdentity(neu));
            if (old.NoFastProducerStall != neu.NoFastProducerStall)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: no_fast_producer_stall = {(neu.NoFastProducerStall ? "true" : "false")}"));
            }
            if ((old.PidFile ?? "") != (neu.PidFile ?? ""))
            {
                changes.Add(new(ReloadEffect.PidFile, $"Reloaded: pid_file = {neu.PidFile}"));
            }
            if ((old.PortsFileDir ?? "") != (neu.PortsFileDir ?? ""))
            {
                changes.Add(new(ReloadEffect.PortsFileDir, $"Reloaded: ports_file_dir = {neu.PortsFileDir}"));
            }
            if ((old.LogFile ?? "") != (neu.LogFile ?? ""))
            {
                changes.Add(new(ReloadEffect.Logging, $"Reloaded: log_file = {neu.LogFile}"));
            }
            Refuse("LogSizeLimit", old.LogSizeLimit, neu.LogSizeLimit);
            var (addRoutes, removeRoutes) = DiffRoutes(old.Cluster.Routes, neu.Cluster.Routes);
            if (addRoutes.Count + removeRoutes.Count > 0)
            {
                changes.Add(new(ReloadEffect.Routes, "Reloaded: cluster routes"));
            }
            if ((old.Tls?.EffectiveTimeoutSeconds ?? 0) != (neu.Tls?.EffectiveTimeoutSeconds ?? 0))
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: tls timeout = {GoFloat(neu.Tls?.EffectiveTimeoutSeconds ?? 0)}"));
            }
            // Go's tlsOption: new certificates (or TLS on/off) apply to the next connections.
            if (TlsIdentity(old) != TlsIdentity(neu))
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: tls = {(neu.TlsContext is null ? "disabled" : "enabled")}"));
            }
            if (!Tls.PinnedCertificates.SameSet(old.Tls?.PinnedCerts, neu.Tls?.PinnedCerts))
            {
                changes.Add(new(ReloadEffect.PinnedCerts, $"Reloaded: {neu.Tls?.PinnedCerts?.Count ?? 0} pinned_certs"));
            }
            if (old.WriteDeadline != neu.WriteDeadline)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: write_deadline = {GoDuration.Format(neu.WriteDeadline)}"));
            }
            Refuse("MaxClosedClients", old.MaxClosedClients, neu.MaxClosedClients);
            Refuse("LameDuckDuration", GoDuration.Format(old.LameDuckDuration), GoDuration.Format(neu.LameDuckDuration));
            Refuse("LameDuckGracePeriod", GoDuration.Format(old.LameDuckGracePeriod), GoDuration.Format(neu.LameDuckGracePeriod));
            if (old.MaxTracedMsgLen != neu.MaxTracedMsgLen)
            {
                changes.Add(new(ReloadEffect.None, $"Reloaded: max_traced_msg_len = {neu.MaxTracedMsgLen}"));
            }
        }
        catch (RefusedException e)
        {
            error = e.Message;
            return null;
        }
        return changes;
    }

    /// <summary>
    /// Go's "cluster" option: host and port cannot change (validateClusterOpts); any other difference reloads the block.
    /// Go compares the block with reflect.DeepEqual, which a configured TLS (a new tls.Config each time) never passes,
    /// so with cluster TLS every reload says "Reloaded: cluster". The routes are Go's separate "routes" option.
    /// </summary>
    private static void Cluster(List<ReloadChange> changes, Routes.ClusterOptions old, Routes.ClusterOptions neu)
    {
        if (old.Host != neu.Host)
        {
            throw new RefusedException($"config reload not supported for cluster host: old={old.Host}, new={neu.Host}");
        }
        if (old.Port != neu.Port)
        {
            throw new RefusedException($"config reload not supported for cluster port: old={old.Port}, new={neu.Port}");
        }
        if (ClusterIdentity(old) != ClusterIdentity(neu) || neu.TlsContext is not null)
        {
            changes.Add(new(ReloadEffect.Cluster, "Reloaded: cluster"));
        }
    }

    private static string ClusterIdentity(Routes.ClusterOptions c) =>
        $"{c.Name}|{c.Username}|{c.Password}|{c.AuthTimeout.Ticks}|{c.Advertise}|{c.NoAdvertise}|{c.ConnectRetries}|{c.PoolSize}|{c.TlsContext is not null}";

    /// <summary>Go's diffRoutes: URLs compared whole (credentials included).</summary>
    public static (List<Uri> Add, List<Uri> Remove) DiffRoutes(List<Uri> old, List<Uri> neu) =>
        ([.. neu.Where(n => !old.Any(o => Routes.ClusterService.SameUrl(o, n)))],
         [.. old.Where(o => !neu.Any(n => Routes.ClusterService.SameUrl(o, n)))]);

    /// <summary>The gateway block without its TLS (as Go compares it), in the shape of Go's %v.</summary>
    private static string GatewayIdentity(Gateways.GatewayOptions g) =>
        $"{{{g.Name} {g.Host} {g.Port} {g.Username} {g.Password} {GoFloat(g.AuthTimeout.TotalSeconds)} {g.Advertise} {g.ConnectRetries} "
        + $"[{string.Join(" ", g.Gateways.Select(r => $"{{{r.Name} [{string.Join(" ", r.Urls.Select(u => u.OriginalString))}]}}"))}] {Format(g.RejectUnknown)} "
        + $"{PinnedIdentity(g.TlsContext)}}}";

    /// <summary>The leaf block without TLS, remotes and users compared as sets (Go's leafRemotesChanged and its users check).</summary>
    private static string LeafIdentity(LeafNodes.LeafNodeOptions l)
    {
        var remotes = l.Remotes.Select(r =>
            $"{{[{string.Join(" ", r.Urls.Select(u => u.OriginalString))}] {(r.LocalAccount.Length == 0 ? "$G" : r.LocalAccount)} {r.Credentials} {Format(r.Hub)} "
            + $"[{string.Join(" ", r.DenyImports)}] [{string.Join(" ", r.DenyExports)}] {Format(r.NoRandomize)} {Format(r.WebSocketCompression)} {Format(r.WebSocketNoMasking)}}}")
            .Order(StringComparer.Ordinal);
        var users = l.Users.Select(u => $"{{{u.Username} {u.Password} {u.Account ?? "$G"}}}").Order(StringComparer.Ordinal);
        return $"{{{l.Host} {l.Port} {l.Username} {l.Password} {l.Account} [{string.Join(" ", users)}] {GoFloat(l.AuthTimeout.TotalSeconds)} {l.Advertise} "
            + $"{Format(l.NoAdvertise)} {GoDuration.Format(l.ReconnectInterval)} [{string.Join(" ", remotes)}] {PinnedIdentity(l.TlsContext)}}}";
    }

    /// <summary>Go's %v of a PinnedCertSet: gateway, leafnodes and websocket blocks compare it (only their tls.Config is left out),
    /// so a changed <c>pinned_certs</c> there refuses the reload.</summary>
    private static string PinnedIdentity(Tls.TlsServerContext? tls) =>
        $"map[{string.Join(" ", (tls?.Options.PinnedCerts ?? []).Order(StringComparer.Ordinal).Select(k => k + ":{}"))}]";

    private static void Logging(List<ReloadChange> changes, ReloadEffect effect, string name, bool old, bool neu)
    {
        if (old != neu)
        {
            changes.Add(new(effect, $"Reloaded: {name} = {(neu ? "true" : "false")}"));
        }
    }

    private static string TlsIdentity(ServerOptions options) => options.TlsContext is { } tls
        ? $"{tls.Certificate.Thumbprint}|{tls.Options.Verify}|{tls.Options.Map}|{tls.Options.CaFile}|{tls.Options.HandshakeFirst}"
        : "";

    private static string WebSocketIdentity(ServerOptions options) => options.WebSocket is { } ws
        ? $"{{{ws.Host} {ws.Port} {ws.Advertise} {ws.NoTls} {ws.SameOrigin} [{string.Join(" ", ws.AllowedOrigins ?? [])}] {ws.Compression} {ws.Username} {ws.Token} {ws.NoAuthUser} {ws.JwtCookie} {ws.HandshakeTimeout} {PinnedIdentity(ws.TlsContext)}}}"
        : "{}";

    private static void Refuse<T>(string field, T old, T neu)
    {
        if (!EqualityComparer<T>.Default.Equals(old, neu))
        {
            throw new RefusedException($"config reload not supported for {field}: old={Format(old)}, new={Format(neu)}");
        }
    }

    private static string Format<T>(T value) => value switch
    {
        bool b => b ? "true" : "false",
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value?.ToString() ?? "",
    };

    /// <summary>Go's %v for a float64: shortest representation ("2", "0.5").</summary>
    private static string GoFloat(double value) => value.ToString("R", CultureInfo.InvariantCulture);

    /// <summary>A comparable rendering of the nkey users with their effective permissions.</summary>
    private static string Canonical(List<NkeyUser>? nkeys, Permissions? defaults)
    {
        if (nkeys is null)
        {
            return "<nil>";
        }
        var sb = new StringBuilder();
        foreach (var user in nkeys.OrderBy(n => n.Nkey, StringComparer.Ordinal))
        {
            sb.Append(user.Nkey).Append('|').Append(user.Account).Append('|');
            AppendPermissions(sb, user.Permissions ?? defaults);
            sb.Append('|').Append(string.Join(',', user.AllowedConnectionTypes ?? [])).Append(';');
        }
        return sb.ToString();
    }

    private static void AppendPermissions(StringBuilder sb, Permissions? permissions)
    {
        if (permissions is null)
        {
            sb.Append("<nil>");
            return;
        }
        foreach (var side in new[] { permissions.Publish, permissions.Subscribe })
        {
            sb.Append('[').Append(side?.Allow is null ? "-" : string.Join(',', side.Allow))
                .Append('/').Append(side?.Deny is null ? "-" : string.Join(',', side.Deny)).Append(']');
        }
        if (permissions.Response is { } response)
        {
            sb.Append(response.MaxMsgs).Append('/').Append(response.Expires.Ticks);
        }
    }

    private sealed class RefusedException(string message) : Exception(message);
}
