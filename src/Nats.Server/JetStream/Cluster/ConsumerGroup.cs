using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;
using Nats.Storage;
using Nats.Storage.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A replicated consumer's RAFT group (Go's <c>C-R3F-…</c>) as one member runs it: the log in
/// <c>&lt;store&gt;/&lt;account&gt;/_js_/&lt;group&gt;/</c>, the consumer's store as the state machine. The leader delivers
/// and proposes what it delivered and what was acknowledged (<see cref="ReplicatedConsumerStore"/>); the others
/// apply that to their store, so whichever replica leads next resumes from the last committed state.
/// </summary>
/// <remarks>
/// A member leads only once it has applied every entry of earlier terms (as a stream group). The snapshot is the
/// store's state in Go's encoding, so the log is compacted.
/// </remarks>
internal sealed class ConsumerGroup : IRaftStateMachine, IAsyncDisposable
{
    private readonly MetaGroup _meta;
    private readonly ILogger _logger;
    // Proposals of this leadership by index, completed when applied (RAFT loop only).
    private readonly Dictionary<ulong, TaskCompletionSource> _commits = [];
    // Stream sequences a follower's applied acks covered this round (interest/work-queue streams only).
    private readonly List<ulong> _acked = [];
    private RaftRunner? _runner;
    private FileRaftStore? _store;
    private RaftNode? _node;
    private ulong _readyAt;
    private volatile bool _activeLeader;
    private bool _applied;
    private bool _replicated;
    private Action<ConsumerGroup>? _onFirstLeader;
    private DateTime _quorumLostSent;

    public ConsumerGroup(MetaGroup meta, ConsumerAssignment assignment, IConsumerStore inner, ILogger logger)
    {
        _meta = meta;
        _logger = logger;
        Assignment = assignment;
        Inner = inner;
        Store = new ReplicatedConsumerStore(inner, this);
        _replicated = inner.HasState();
    }

    public ConsumerAssignment Assignment { get; set; }

    public string Name => Assignment.Group;

    /// <summary>The consumer's local store, which followers apply the leader's ops to.</summary>
    public IConsumerStore Inner { get; }

    /// <summary>The store the consumer writes through: local, and proposed to the group.</summary>
    public ReplicatedConsumerStore Store { get; }

    public JsConsumer? Consumer { get; set; }

    /// <summary>This member leads the group and has applied everything before its term: it delivers.</summary>
    public bool IsActiveLeader => _activeLeader;

    public RaftStatus Status => _runner?.Status ?? RaftStatus.Initial;

    /// <param name="onFirstLeader">Called once, off the RAFT loop, if this member is the first to lead with the consumer
    /// new here (it answers the create request and then starts delivery).</param>
    public void Start(string storeDirectory, Account system, bool campaign, Action<ConsumerGroup>? onFirstLeader)
    {
        _onFirstLeader = onFirstLeader;
        var directory = Path.Combine(storeDirectory, Assignment.Account, "_js_", Name);
        _store = new FileRaftStore(directory, warning => _logger.LogWarning("{Warning}", warning));
        var transport = new NrgTransport(_meta.Server, system, Name, _meta.PeerId);
        var options = new RaftOptions();
        var peers = Assignment.Peers.Where(p => p != _meta.PeerId).ToList();
        var runner = new RaftRunner(now =>
        {
            var node = new RaftNode(_meta.PeerId, peers, Assignment.Peers.Count, options, _store, transport, this, new Random(), now,
                message => _logger.LogDebug("{Group} {Message}", Name, message));
            _node = node;
            if (campaign)
            {
                node.CampaignNow(now);
            }
            return node;
        }, _logger);
        _runner = runner;
        _store.Synced = runner.Wake;
        transport.Start(runner, _logger);
    }

    /// <summary>The leader's store has ops to propose: they go out as one entry when the RAFT loop next runs.</summary>
    public void ProposeSoon(ReplicatedConsumerStore store) => _runner?.Post((node, _) =>
    {
        var (batch, done) = store.Take();
        if (batch.Length == 0)
        {
            done?.TrySetResult();
            return;
        }
        var index = _activeLeader ? node.Propose(batch) : 0;
        if (index == 0)
        {
            // Leadership went meanwhile: the next leader resumes from what was committed, so this is redelivered.
            done?.TrySetException(new IOException("not the consumer leader"));
        }
        else if (done is not null)
        {
            _commits[index] = done;
        }
    });

    public Task<bool> StepDownAsync() => _runner is { } runner ? runner.Ask((node, now) => node.StepDown(now)) : Task.FromResult(false);

    /// <summary>Before a clean shutdown: hands leadership over and waits (bounded) for the new leader (<see cref="LeaderHandOver"/>),
    /// so delivery resumes on another replica at once rather than after an election timeout.</summary>
    public Task HandOverAsync(TimeSpan timeout) => _handOver.RunAsync(StepDownAsync, timeout);

    private readonly LeaderHandOver _handOver = new();

    public void Apply(ulong index, byte[] data)
    {
        if (_commits.Remove(index, out var done))
        {
            // Ours, applied to the local store when it was proposed.
            done.TrySetResult();
            return;
        }
        try
        {
            ConsumerOps.Apply(data, Inner, Consumer?.Stream.Config.Retention is RetentionPolicy.Interest or RetentionPolicy.WorkQueue ? _acked : null);
            _applied = true;
            _replicated = true;
        }
        catch (Exception e) when (e is ObjectDisposedException or IOException)
        {
            _logger.LogWarning("JetStream cluster consumer '{Account} > {Stream} > {Consumer}' entry not applied: {Error}",
                Assignment.Account, Assignment.Stream, Assignment.Name, e.Message);
        }
    }

    public void AfterApply()
    {
        if (_applied && !_activeLeader && Consumer is { } follower)
        {
            follower.LoadState(Inner.State());
            if (_acked.Count > 0)
            {
                // Interest and work-queue retention on this replica too, once the copy knows what was acknowledged.
                follower.Stream.Consumers.OnAcked(follower, _acked);
            }
        }
        _acked.Clear();
        _applied = false;
        if (!_activeLeader && _node is { Role: RaftRole.Leader } node && node.AppliedIndex >= _readyAt && Consumer is { } consumer)
        {
            _activeLeader = true;
            // Ops written by an earlier leadership of this member and never proposed: what was committed counts.
            var (_, stale) = Store.Take();
            stale?.TrySetException(new IOException("not the consumer leader"));
            consumer.Activate(fresh: !_replicated && !Inner.HasState());
            _logger.LogInformation("JetStream cluster new consumer leader for '{Account} > {Stream} > {Consumer}'",
                Assignment.Account, Assignment.Stream, Assignment.Name);
            ClusterAdvisories.ConsumerLeaderElected(_meta, consumer.Stream, Assignment.Name, Status, Assignment.Peers);
            if (Interlocked.Exchange(ref _onFirstLeader, null) is { } first)
            {
                _ = Task.Run(() => first(this));
            }
            else
            {
                consumer.Run();
            }
        }
    }

    public byte[] CreateSnapshot() => Inner.EncodedState();

    public void Restore(byte[] data)
    {
        if (ConsumerStateCodec.Decode(data) is not { } state)
        {
            return;
        }
        _replicated = true;
        try
        {
            Inner.Update(state);
        }
        catch (StoreException)
        {
            // The store is at least as far along (the snapshot is replayed after a restart).
        }
        if (!_activeLeader)
        {
            Consumer?.LoadState(Inner.State());
        }
    }

    public void LeaderChanged(string? leader, ulong term)
    {
        if (leader is null && _node is { SteppingDownWithoutQuorum: true } && Consumer is { } stalled
            && DateTime.UtcNow - _quorumLostSent >= ClusterAdvisories.QuorumLostInterval)
        {
            _quorumLostSent = DateTime.UtcNow;
            _logger.LogWarning("JetStream cluster consumer '{Account} > {Stream} > {Consumer}' has NO quorum, stalled",
                Assignment.Account, Assignment.Stream, Assignment.Name);
            ClusterAdvisories.ConsumerQuorumLost(_meta, stalled.Stream, Assignment.Name, Status, Assignment.Peers);
        }
        if (_activeLeader)
        {
            Consumer?.Deactivate();
        }
        _activeLeader = false;
        foreach (var done in _commits.Values)
        {
            done.TrySetException(new IOException("consumer leadership lost"));
        }
        _commits.Clear();
        if (leader == _meta.PeerId && _node is { } node)
        {
            _readyAt = node.LastIndex + 1;
        }
        else if (leader is not null)
        {
            _onFirstLeader = null;
            _handOver.OtherLeads();
        }
    }

    /// <summary>Go's ClusterInfo in the consumer's info: the leader and, on the leader, the other replicas.</summary>
    public StreamClusterInfo ClusterInfo() => GroupClusterInfo.Build(_meta, Status, Assignment.Peers, _activeLeader);

    public async ValueTask DisposeAsync()
    {
        if (_activeLeader)
        {
            Consumer?.Deactivate();
        }
        _activeLeader = false;
        if (_runner is { } runner)
        {
            await runner.DisposeAsync().ConfigureAwait(false);
        }
        _store?.Dispose();
    }

    /// <summary>Removes the group's log (the consumer or its stream was deleted).</summary>
    public void DeleteLog()
    {
        var directory = Path.Combine(_meta.StoreDirectory, Assignment.Account, "_js_", Name);
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }
}
