namespace Nats.Server.Routes;

/// <summary>
/// The routes by peer server id (Go's s.routes/s.remotes): the second connection registered for an id
/// is a duplicate and is closed; <see cref="Registered"/> is a snapshot array that interest updates and
/// gossip walk without a lock or an allocation. The connections still in their handshake live in the
/// cluster's link set only.
/// </summary>
internal sealed class RouteTable
{
    private readonly Lock _sync = new();
    private readonly Dictionary<string, RouteConnection> _byId = new(StringComparer.Ordinal);
    private volatile RouteConnection[] _registered = [];

    private volatile RoutePermissions? _permissions;

    /// <summary>The cluster's permissions in force, read by every RS+ a peer sends (a reload replaces them).</summary>
    public RoutePermissions? Permissions
    {
        get => _permissions;
        set => _permissions = value;
    }

    /// <summary>Routes past their first INFO, one per peer server.</summary>
    public RouteConnection[] Registered => _registered;

    /// <summary>Registers <paramref name="route"/> for its peer's id; false when that peer already has a route.</summary>
    public bool TryRegister(RouteConnection route)
    {
        lock (_sync)
        {
            if (_byId.ContainsKey(route.RemoteId))
            {
                return false;
            }
            _byId[route.RemoteId] = route;
            _registered = [.. _byId.Values];
            return true;
        }
    }

    public bool IsConnected(string serverId)
    {
        lock (_sync)
        {
            return _byId.ContainsKey(serverId);
        }
    }

    public RouteConnection? Find(string serverId)
    {
        lock (_sync)
        {
            return _byId.GetValueOrDefault(serverId);
        }
    }

    /// <summary>Forgets a closed route; true when it was the registered one for its peer.</summary>
    public bool Remove(RouteConnection route)
    {
        lock (_sync)
        {
            if (route.RemoteId.Length > 0 && _byId.TryGetValue(route.RemoteId, out var current) && ReferenceEquals(current, route))
            {
                _byId.Remove(route.RemoteId);
                _registered = [.. _byId.Values];
                return true;
            }
            return false;
        }
    }
}
