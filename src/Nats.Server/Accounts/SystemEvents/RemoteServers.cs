using System.Diagnostics;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The other servers of the cluster as the system account hears of them (Go's sys.servers with
/// remoteServerUpdate, remoteServerShutdown, remoteConnsUpdate and checkRemoteServers): a server is
/// known from its first statsz or account-connections event, kept while its events keep coming in
/// sequence, and forgotten when it announces its shutdown or stays silent past five heartbeats.
/// Account connection counts it reports count against the account's limits everywhere; an account
/// found over its <c>max_connections</c> closes its newest local clients, as Go does. The account
/// counts change at once, on the thread that delivers the event (as Go's handler runs in the route's
/// read loop), so a client that connects after the event reached this server is counted against
/// it; the server map is touched only on the system account's loop, so it needs no lock.
/// </summary>
internal sealed class RemoteServers
{
    // Go's orphMax and chkOrph: five and three events heartbeats.
    internal static readonly TimeSpan OrphanAfter = SystemAccountService.EventsHeartbeat * 5;
    internal static readonly TimeSpan SweepEvery = SystemAccountService.EventsHeartbeat * 3;

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly Action _announce;
    private readonly Action<Action> _post;
    private readonly Dictionary<string, (ulong Seq, long Seen)> _servers = new(StringComparer.Ordinal);

    /// <param name="announce">Publishes this server's statsz: sent when a new server appears, so it learns of us at once.</param>
    /// <param name="post">Runs work on the system account's loop.</param>
    public RemoteServers(NatsServer server, ILogger logger, Action announce, Action<Action> post)
    {
        _server = server;
        _logger = logger;
        _announce = announce;
        _post = post;
    }

    /// <summary>Servers known now (statsz <c>active_servers</c> is one more).</summary>
    public int Count => _servers.Count;

    /// <summary>$SYS.SERVER.&lt;id&gt;.STATSZ from anyone: a sign of life with its sequence.</summary>
    public void OnStatsz(byte[] body)
    {
        if (body.Length == 0)
        {
            _logger.LogDebug("Received empty server info for remote server update");
            return;
        }
        if (!TryParse(body, out var root) || !TryServer(root, "server", out var id, out var seq))
        {
            _logger.LogDebug("Received bad server info for remote server update");
            return;
        }
        if (id != _server.ServerId)
        {
            Seen(id, seq);
        }
    }

    /// <summary>$SYS.SERVER.&lt;id&gt;.SHUTDOWN: the server and its account connections are forgotten at once.</summary>
    public void OnShutdown(string subject, byte[] body)
    {
        var tokens = subject.Split('.');
        if (tokens.Length < 4)
        {
            _logger.LogDebug("Received remote server shutdown on bad subject \"{Subject}\"", subject);
            return;
        }
        if (body.Length == 0)
        {
            _logger.LogError("Remote server sent invalid (empty) shutdown message to \"{Subject}\"", subject);
            return;
        }
        if (!TryParse(body, out _))
        {
            _logger.LogDebug("Received bad server info for remote server shutdown");
            return;
        }
        if (_servers.ContainsKey(tokens[2]))
        {
            Forget(tokens[2]);
        }
    }

    /// <summary>
    /// $SYS.SERVER.ACCOUNT.&lt;acc&gt;.CONNS (or the answer to our CONNS request): that server's local
    /// connections of an account we know; over the limit, our newest clients of it are closed. Runs on
    /// the delivering thread; the server's sequence is checked on the loop.
    /// </summary>
    public void OnAccountConns(ReadOnlySpan<byte> body)
    {
        if (body.Length == 0)
        {
            _logger.LogError("No message body provided");
            return;
        }
        if (!TryParse(body, out var root) || !TryServer(root, "server", out var id, out var seq))
        {
            _logger.LogError("Error unmarshalling account connection event message");
            return;
        }
        // Only accounts already loaded here: an event must not make this server fetch one.
        if (root.TryGetProperty("acc", out var name) && name.ValueKind == JsonValueKind.String
            && _server.FindAccount(name.GetString()!) is { } account && id != _server.ServerId)
        {
            account.Remote.Update(id, IntOf(root, "conns"), IntOf(root, "leafnodes"));
            CloseOverLimit(account);
            _post(() => Seen(id, seq));
        }
    }

    /// <summary>Go's checkRemoteServers: a server silent for longer than <see cref="OrphanAfter"/> is treated as gone.</summary>
    public void Sweep()
    {
        var now = Stopwatch.GetTimestamp();
        foreach (var (id, (_, seen)) in _servers.ToList())
        {
            if (Stopwatch.GetElapsedTime(seen, now) > OrphanAfter)
            {
                _logger.LogDebug("Detected orphan remote server: \"{Id}\"", id);
                Forget(id);
            }
        }
    }

    private void Seen(string id, ulong seq)
    {
        if (!_servers.TryGetValue(id, out var known))
        {
            _servers[id] = (seq, Stopwatch.GetTimestamp());
            _announce();
            return;
        }
        if (seq <= known.Seq)
        {
            _logger.LogError("Received out of order remote server update from: \"{Id}\"", id);
            return;
        }
        _servers[id] = (seq, Stopwatch.GetTimestamp());
    }

    private void Forget(string id)
    {
        foreach (var account in _server.Accounts)
        {
            account.Remote.Remove(id);
        }
        _servers.Remove(id);
    }

    /// <summary>Go's updateRemoteServer overflow rule: the newest local clients go until the cluster-wide count fits.</summary>
    private void CloseOverLimit(Account account)
    {
        var max = account.Options.Limits.MaxConnections;
        if (max == AccountLimits.NoLimit)
        {
            return;
        }
        var over = account.ClientCount + account.Remote.Clients - max;
        if (over <= 0)
        {
            return;
        }
        var newest = _server.Clients
            .Where(c => ReferenceEquals(c.Account, account) && c.ConnectReceived && !c.IsClosed)
            .OrderByDescending(c => c.StartTime)
            .Take(over)
            .ToList();
        foreach (var client in newest)
        {
            client.Reload.CloseForMaxAccountConnections();
        }
    }

    private static bool TryParse(ReadOnlySpan<byte> body, out JsonElement root)
    {
        try
        {
            var reader = new Utf8JsonReader(body);
            using var document = JsonDocument.ParseValue(ref reader);
            root = document.RootElement.Clone();
            return root.ValueKind == JsonValueKind.Object;
        }
        catch (JsonException)
        {
            root = default;
            return false;
        }
    }

    private static bool TryServer(JsonElement root, string property, out string id, out ulong seq)
    {
        id = "";
        seq = 0;
        if (!root.TryGetProperty(property, out var server) || server.ValueKind != JsonValueKind.Object
            || !server.TryGetProperty("id", out var idElement) || idElement.ValueKind != JsonValueKind.String)
        {
            return false;
        }
        id = idElement.GetString()!;
        if (server.TryGetProperty("seq", out var seqElement) && seqElement.ValueKind == JsonValueKind.Number)
        {
            seqElement.TryGetUInt64(out seq);
        }
        return id.Length > 0;
    }

    private static int IntOf(JsonElement root, string property) =>
        root.TryGetProperty(property, out var value) && value.ValueKind == JsonValueKind.Number && value.TryGetInt32(out var n) ? n : 0;
}
