namespace Nats.Server.JetStream.Consumers;

/// <summary>
/// A replicated consumer (Go's consumer with a RAFT group): every replica holds one; the group's leader delivers and
/// takes acks, the others follow their store, which the group applies the leader's ops to.
/// </summary>
internal sealed partial class JsConsumer
{
    /// <summary>The group replicating this consumer; null for a standalone or R1 one.</summary>
    public Cluster.ConsumerGroup? Group { get; set; }

    /// <summary>Called once this consumer deleted itself for inactivity: an ephemeral the meta group assigned has its
    /// assignment removed there too.</summary>
    public Action<JsConsumer>? Expired { get; set; }

    /// <summary>Go's clusterInfo: a group's, or for a consumer without one on a replicated stream (an R1 ephemeral the meta
    /// group placed here) the cluster and this server as its leader.</summary>
    private Api.StreamClusterInfo? ClusterInfo() => Group?.ClusterInfo()
        ?? (Stream.Group is not null && Stream.Account.Service.Meta is { } meta
            ? new Api.StreamClusterInfo { Name = meta.ClusterName, Leader = meta.Server.ServerName }
            : null);

    /// <summary>A follower's copy takes its store's state (for its info and interest retention).</summary>
    public void LoadState(Storage.ConsumerState state)
    {
        lock (_lock)
        {
            LoadStateLocked(state);
        }
    }

    /// <summary>
    /// This replica leads the group now: it resumes from the replicated state (what was pending is redelivered at
    /// once, as after a restart) or, when nothing was replicated yet, selects its start as a new consumer does.
    /// <see cref="Run"/> starts delivery.
    /// </summary>
    public void Activate(bool fresh)
    {
        lock (_lock)
        {
            _generation++;
            _stopped = false;
            _loop = null;
            _pendingCheckAt = 0;
            // An ephemeral's inactivity counts from here (Go restarts its delete timer on a new leader): the clients' pull
            // requests went with the old leader.
            _lastActive = Environment.TickCount64;
            if (fresh || _store is null)
            {
                SelectStart();
            }
            else
            {
                LoadStateLocked(_store.State());
                foreach (var seq in _pending.Keys.Order())
                {
                    _redeliverQueue.Add(seq);
                }
            }
        }
        Subscribe();
    }

    /// <summary>Another replica leads: stop delivering and taking acks; waiting pull requests are dropped (their clients time out).</summary>
    public void Deactivate()
    {
        _stopped = true;
        Account.SubList.Inserted -= OnInterest;
        foreach (var subscription in _subscriptions)
        {
            subscription.Dispose();
        }
        _subscriptions.Clear();
        lock (_lock)
        {
            _generation++;
            _waiting.Clear();
        }
        Signal();
    }
}
