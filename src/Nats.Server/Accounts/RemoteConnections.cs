namespace Nats.Server.Accounts;

/// <summary>
/// An account's connections on the other servers of the cluster (Go's Account.strack, nrclients and
/// nrleafs), as their <c>$SYS.SERVER.ACCOUNT.&lt;acc&gt;.CONNS</c> updates report them. Each update
/// replaces that server's numbers (updates are idempotent, so a lost one is healed by the next
/// heartbeat); a server that shuts down or goes silent is dropped. The totals count against the
/// account's <c>max_connections</c> and <c>max_leafnodes</c>.
/// </summary>
internal sealed class RemoteConnections
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, (int Conns, int Leafs)> _byServer = new(StringComparer.Ordinal);
    private int _clients;
    private int _leafs;

    /// <summary>Client connections on other servers.</summary>
    public int Clients => Volatile.Read(ref _clients);

    /// <summary>Leaf connections on other servers.</summary>
    public int Leafs => Volatile.Read(ref _leafs);

    /// <summary>Records what <paramref name="serverId"/> reports now.</summary>
    public void Update(string serverId, int conns, int leafs)
    {
        lock (_lock)
        {
            var previous = _byServer.GetValueOrDefault(serverId);
            _byServer[serverId] = (conns, leafs);
            Volatile.Write(ref _clients, _clients + conns - previous.Conns);
            Volatile.Write(ref _leafs, _leafs + leafs - previous.Leafs);
        }
    }

    /// <summary>Forgets <paramref name="serverId"/> (it shut down or was not heard of for too long).</summary>
    public void Remove(string serverId)
    {
        lock (_lock)
        {
            if (_byServer.Remove(serverId, out var previous))
            {
                Volatile.Write(ref _clients, _clients - previous.Conns);
                Volatile.Write(ref _leafs, _leafs - previous.Leafs);
            }
        }
    }
}
