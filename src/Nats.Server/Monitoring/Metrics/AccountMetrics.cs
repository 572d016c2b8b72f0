using Nats.Server.Accounts;
using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>
/// Per-account counters as prometheus-nats-exporter's accstatz collector names them
/// (gnatsd_accstatz_*, labels server_id, account, account_id, account_name), taken from the same
/// /accstatz?unused=1 document the HTTP monitor serves. Accounts removed by a reload lose their series.
/// </summary>
internal sealed class AccountMetrics : IMetricsSet
{
    private const string Prefix = "gnatsd_accstatz_";

    private readonly Func<AccountStatz> _statz;
    private readonly Func<string, Account?> _findAccount;
    private readonly string _serverId;
    private readonly (Gauge Gauge, Func<AccountStat, Account?, double> Read)[] _fields;
    private HashSet<string> _reported = new(StringComparer.Ordinal);

    public AccountMetrics(IMetricFactory factory, string serverId, Func<AccountStatz> statz, Func<string, Account?> findAccount)
    {
        _statz = statz;
        _findAccount = findAccount;
        _serverId = serverId;
        string[] labels = ["server_id", "account", "account_id", "account_name"];
        _fields =
        [
            (factory.CreateGauge(Prefix + "current_connections", "Clients currently connected to the account", labels), (s, _) => s.Conns),
            (factory.CreateGauge(Prefix + "total_connections", "Clients and leaf nodes connected to the account", labels), (s, _) => s.TotalConns),
            (factory.CreateGauge(Prefix + "subscriptions", "Subscriptions in the account", labels), (_, a) => a?.VisibleSubscriptionCount ?? 0),
            (factory.CreateGauge(Prefix + "leaf_nodes", "Leaf node connections of the account", labels), (s, _) => s.LeafNodes),
            (factory.CreateGauge(Prefix + "sent_messages", "Messages delivered to the account's clients", labels), (s, _) => s.Sent.Msgs),
            (factory.CreateGauge(Prefix + "sent_bytes", "Payload bytes delivered to the account's clients", labels), (s, _) => s.Sent.Bytes),
            (factory.CreateGauge(Prefix + "received_messages", "Messages received from the account's clients", labels), (s, _) => s.Received.Msgs),
            (factory.CreateGauge(Prefix + "received_bytes", "Payload bytes received from the account's clients", labels), (s, _) => s.Received.Bytes),
            (factory.CreateGauge(Prefix + "slow_consumers", "Slow consumers among the account's clients", labels), (s, _) => s.SlowConsumers),
        ];
    }

    public void Update()
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var stat in _statz().Accounts)
        {
            seen.Add(stat.Account);
            var account = _findAccount(stat.Account);
            foreach (var (gauge, read) in _fields)
            {
                // Go's AccountStat has no separate id and name; the exporter fills both from "acc".
                gauge.WithLabels(_serverId, stat.Account, stat.Account, stat.Account).Set(read(stat, account));
            }
        }
        foreach (var gone in _reported.Where(name => !seen.Contains(name)))
        {
            foreach (var (gauge, _) in _fields)
            {
                gauge.RemoveLabelled(_serverId, gone, gone, gone);
            }
        }
        _reported = seen;
    }
}
