namespace Nats.Server.JetStream.Consumers;

/// <summary>
/// A replicated consumer (Go's consumer with a RAFT group): every replica holds one; the group's leader delivers and
/// takes acks, the others follow their store, which the group applies the leader's ops to.
/// </summary>
internal sealed partial class JsConsumer
{
    /// <summary>The group replicating this consumer; null for a standalone or R1 one.</summary>
    public Cluster.ConsumerGroup? Group { get; set; }

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
