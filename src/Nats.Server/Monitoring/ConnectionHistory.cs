using Nats.Server.Clients;

namespace Nats.Server.Monitoring;

/// <summary>
/// The last closed connections (a ring of max_closed_clients, 10000 by default, like Go) and the
/// traffic totals of every connection that ever closed. Server-wide and per-account counters are
/// the sum of these totals and the live connections' own counters, computed when asked, so the
/// message path pays nothing for them. Closing a connection and summing take the same lock, so a
/// connection is counted exactly once while it moves from live to closed.
/// </summary>
internal sealed class ConnectionHistory
{
    public const int DefaultMaxClosedClients = 10_000;

    private readonly ClosedConnection?[] _ring;
    private readonly Dictionary<string, TrafficTotals> _accounts = new(StringComparer.Ordinal);
    private long _closedCount;

    public ConnectionHistory(int maxClosed = DefaultMaxClosedClients)
    {
        _ring = new ClosedConnection?[Math.Max(0, maxClosed)];
    }

    /// <summary>Held while moving a connection from live to closed, and while summing both.</summary>
    public Lock SyncRoot { get; } = new();

    /// <summary>Totals of all closed connections, server-wide.</summary>
    public TrafficTotals Closed { get; } = new();

    /// <summary>Caller holds <see cref="SyncRoot"/>.</summary>
    public void AddLocked(ClosedConnection closed)
    {
        var account = AccountTotalsLocked(closed.Account);
        foreach (var totals in new[] { Closed, account })
        {
            totals.InMsgs += closed.Info.InMsgs;
            totals.InBytes += closed.Info.InBytes;
            totals.OutMsgs += closed.Info.OutMsgs;
            totals.OutBytes += closed.Info.OutBytes;
            if (closed.Reason is ClosedReason.SlowConsumerPendingBytes or ClosedReason.SlowConsumerWriteDeadline)
            {
                totals.SlowConsumers++;
            }
        }
        if (_ring.Length > 0)
        {
            _ring[(int)(_closedCount % _ring.Length)] = closed;
        }
        _closedCount++;
    }

    /// <summary>Caller holds <see cref="SyncRoot"/>.</summary>
    public TrafficTotals AccountTotalsLocked(string account)
    {
        if (!_accounts.TryGetValue(account, out var totals))
        {
            totals = new TrafficTotals();
            _accounts[account] = totals;
        }
        return totals;
    }

    /// <summary>The kept closed connections, oldest first.</summary>
    public List<ClosedConnection> Snapshot()
    {
        lock (SyncRoot)
        {
            var kept = (int)Math.Min(_closedCount, _ring.Length);
            var list = new List<ClosedConnection>(kept);
            var start = _closedCount <= _ring.Length ? 0 : (int)(_closedCount % _ring.Length);
            for (var i = 0; i < kept; i++)
            {
                list.Add(_ring[(start + i) % _ring.Length]!);
            }
            return list;
        }
    }
}

/// <summary>Message and byte counts; mutable, guarded by <see cref="ConnectionHistory.SyncRoot"/>.</summary>
internal sealed class TrafficTotals
{
    public long InMsgs;
    public long InBytes;
    public long OutMsgs;
    public long OutBytes;
    public long SlowConsumers;
}
