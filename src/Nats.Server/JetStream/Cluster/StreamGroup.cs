using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A replicated stream's RAFT group as one member runs it: the log in <c>&lt;store&gt;/&lt;account&gt;/_js_/&lt;group&gt;/</c>,
/// the stream's own store as the state machine. The leader alone takes publishes (<see cref="StreamIngest"/>
/// proposes them); every member stores an entry once it is committed, i.e. fsynced on a quorum, and the leader
/// then sends its PubAck.
/// </summary>
/// <remarks>
/// After a restart the log since the last snapshot is replayed into the store (entries the store holds are
/// skipped), which also repairs a store that lost writes it had not synced. A new leader takes publishes only
/// once it has applied every entry of earlier terms, so sequences continue from a complete store.
/// The log is compacted as Go's monitorStream does: after 65,536 applied entries or 8 MiB of them, or two minutes
/// with anything applied, the snapshot is the stream's state (<see cref="StreamSnapshot"/>), taken only once the
/// store has synced everything the dropped entries put there. A replica behind a snapshot (one that installed the
/// leader's, or a memory store after a restart) copies the missing messages from the leader's store
/// (<see cref="StreamCatchup"/>) and never campaigns until it has them. The store is log-backed
/// (<see cref="Nats.Storage.IStreamStore.SetLogBacked"/>): its message appends are not fsynced a second time, so the
/// snapshot syncs the store before the log entries go, and leaving the group syncs it.
/// </remarks>
internal sealed class StreamGroup : IRaftStateMachine, IAsyncDisposable
{
    private readonly MetaGroup _meta;
    private readonly JsStream _stream;
    private readonly ILogger _logger;
    private readonly List<(byte[] Reply, ulong Seq, JsApiError? Error)> _acks = [];
    private readonly List<Action> _answers = [];
    private RaftRunner? _runner;
    private StreamCatchup? _catchup;
    private Func<ulong, bool>? _catchUpTo;
    private FileRaftStore? _store;
    private RaftNode? _node;
    private ulong _readyAt;
    private volatile bool _activeLeader;
    private volatile bool _stopping;
    private int _epoch;
    private Action<StreamGroup>? _onFirstLeader;

    // The last sequence of a snapshot this replica's store has not reached yet (0: none), and whether a scale-up's
    // replica still waits for the leader's sync entry: either keeps it from campaigning.
    private ulong _behindTo;
    private bool _awaitingSync;
    private bool _snapshotCatchUpRunning;

    /// <summary>Go's monitorStream thresholds (compactNumMin, compactSizeMin, compactInterval). Go waits 10 s between
    /// snapshots (minSnapDelta); ours 1 s, because our log keeps its entries in memory until they are compacted.</summary>
    internal static RaftOptions LogOptions { get; } = CreateLogOptions();

    /// <summary>Tests set this to compact after fewer entries (and without the minimum interval), so a few thousand
    /// messages exercise snapshots and catch-up; unset, Go's thresholds hold.</summary>
    internal const string CompactEntriesVariable = "NATS_TEST_STREAM_COMPACT_ENTRIES";

    private static RaftOptions CreateLogOptions()
    {
        var options = new RaftOptions
        {
            SnapshotAfterEntries = 65536,
            SnapshotAfterBytes = 8L << 20,
            SnapshotMinIntervalMs = 1000,
            SnapshotIntervalMs = 120_000,
            MaxApplyPerFlush = 2048,
        };
        return int.TryParse(Environment.GetEnvironmentVariable(CompactEntriesVariable), out var entries) && entries > 0
            ? options with { SnapshotAfterEntries = entries, SnapshotMinIntervalMs = 0 }
            : options;
    }

    public StreamGroup(MetaGroup meta, JsStream stream, StreamAssignment assignment, ILogger logger)
    {
        _meta = meta;
        _stream = stream;
        _logger = logger;
        Assignment = assignment;
    }

    /// <summary>The stream's assignment; an update that keeps the group replaces it (config, request subject and reply).</summary>
    public StreamAssignment Assignment { get; set; }

    public string Name => Assignment.Group;

    /// <summary>This member leads the group and has applied everything before its term: it takes publishes.</summary>
    public bool IsActiveLeader => _activeLeader;

    public RaftStatus Status => _runner?.Status ?? RaftStatus.Initial;

    /// <param name="onFirstLeader">Called once, on this member, if it is the first to lead with the group known to be
    /// new here (it answers the create request).</param>
    /// <param name="observer">A replica a scale-up added: it never campaigns until it has applied a leader's sync entry
    /// (<see cref="StreamCatchup.SyncOp"/>) with its store caught up, so a store lacking the stream's older messages never leads.</param>
    public void Start(string storeDirectory, Account system, bool campaign, Action<StreamGroup>? onFirstLeader, bool observer = false)
    {
        _onFirstLeader = onFirstLeader;
        var directory = Path.Combine(storeDirectory, Assignment.Account, "_js_", Name);
        _store = new FileRaftStore(directory, warning => _logger.LogWarning("{Warning}", warning));
        _stream.Store.SetLogBacked(true);
        var transport = new NrgTransport(_meta.Server, system, Name, _meta.PeerId);
        var options = LogOptions;
        _awaitingSync = observer;
        var peers = Assignment.Peers.Where(p => p != _meta.PeerId).ToList();
        var runner = new RaftRunner(now =>
        {
            var node = new RaftNode(_meta.PeerId, peers, Assignment.Peers.Count, options, _store, transport, this, new Random(), now,
                message => _logger.LogDebug("{Group} {Message}", Name, message));
            _node = node;
            node.Observer = MustNotLead;
            if (campaign)
            {
                node.CampaignNow(now);
            }
            return node;
        }, _logger);
        _runner = runner;
        _store.Synced = runner.Wake;
        transport.Start(runner, _logger);
        _catchup = new StreamCatchup(_meta, _stream, Name, _logger);
        _catchup.Start(system, () => _activeLeader);
        _logger.LogDebug("JetStream cluster stream '{Account} > {Stream}' group {Group} started (log at index {Index})",
            Assignment.Account, Assignment.Stream, Name, _store.LastIndex);
    }

    /// <param name="epoch">The leadership the proposer numbered the entry for (<see cref="StreamIngest.BecomeReplicatedLeader"/>):
    /// an entry numbered for an earlier one would carry a stale sequence into a later term, so it is dropped.</param>
    public void Propose(byte[] entry, int epoch)
    {
        if (_runner is not { } runner)
        {
            return;
        }
        // Queued, and the loop asked once per burst to take them all: no closure or channel item per message.
        lock (_queueLock)
        {
            _queued.Add((entry, epoch));
            if (_queuePosted)
            {
                return;
            }
            _queuePosted = true;
        }
        runner.Post(_proposeQueued ??= ProposeQueued);
    }

    private readonly Lock _queueLock = new();
    private List<(byte[] Entry, int Epoch)> _queued = [];
    private List<(byte[] Entry, int Epoch)> _taking = [];
    private bool _queuePosted;
    private Action<RaftNode, long>? _proposeQueued;

    /// <summary>On the loop: the proposals queued so far, in the order they were numbered.</summary>
    private void ProposeQueued(RaftNode node, long now)
    {
        lock (_queueLock)
        {
            (_queued, _taking) = (_taking, _queued);
            _queuePosted = false;
        }
        foreach (var (entry, epoch) in _taking)
        {
            if (epoch == _epoch)
            {
                node.Propose(entry);
            }
        }
        _taking.Clear();
    }

    /// <summary>Go's jsClusteredStreamPurgeRequest: the purge goes into the log behind every message numbered so far.</summary>
    public void ProposePurge(ApiRequest request, PurgeRequest body) =>
        _stream.Ingest.ProposeAfterNumbered(this, lastSeq => StreamAdminOps.Entry(request, body, _stream.Name, lastSeq));

    /// <summary>Go's jsClusteredMsgDeleteRequest.</summary>
    public void ProposeMsgDelete(ApiRequest request, ulong seq, bool noErase) =>
        _stream.Ingest.ProposeAfterNumbered(this, _ => StreamAdminOps.Entry(request, _stream.Name, seq, noErase));

    /// <summary>Hands leadership to another member; false when this member does not lead.</summary>
    public Task<bool> StepDownAsync() => _runner is { } runner ? runner.Ask((node, now) => node.StepDown(now, _unready ??= Unready)) : Task.FromResult(false);

    private Func<string, bool>? _unready;

    // A replica that asked for messages lately may still be copying them (it never campaigns until it has them). The
    // window is generous: passing over a replica that just finished costs nothing while another member is current.
    private bool Unready(string peer) => _catchup is { } catchup && catchup.CopiedRecently(peer, TimeSpan.FromSeconds(5));

    /// <summary>Before a clean shutdown: hands leadership over and waits (bounded) for the new leader (<see cref="LeaderHandOver"/>).</summary>
    public async Task HandOverAsync(TimeSpan timeout)
    {
        if (!await _handOver.RunAsync(StepDownAsync, timeout).ConfigureAwait(false))
        {
            _logger.LogDebug("{Group} no new leader within {Timeout} of the hand-over", Name, timeout);
        }
    }

    private readonly LeaderHandOver _handOver = new();
    private DateTime _quorumLostSent;

    /// <summary>Fills this replica's store from the leader up to a sequence the log continues from (RAFT loop only).</summary>
    private bool CatchUp(ulong to)
    {
        var done = _node is { Role: not RaftRole.Leader, Leader: not null } && _catchup is { } catchup && catchup.CatchUp(to);
        if (done && _behindTo > 0 && _stream.Store.FastState().LastSeq >= _behindTo)
        {
            CaughtUpToSnapshot();
        }
        return done;
    }

    // A memory replica behind its snapshot may still lead: after every replica restarted none has the messages, and
    // a group that waited for them would never have a leader again.
    private bool MustNotLead => _awaitingSync || (_behindTo > 0 && _stream.Store.Type != Nats.Storage.StorageType.Memory);

    private void UpdateObserver()
    {
        if (_node is { } node)
        {
            node.Observer = MustNotLead;
        }
    }

    public void Apply(ulong index, byte[] data)
    {
        if (data.Length == 9 && data[0] == StreamCatchup.SyncOp)
        {
            var lastSeq = System.Buffers.Binary.BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(1));
            if ((lastSeq <= _stream.Store.State().LastSeq || CatchUp(lastSeq)) && _awaitingSync)
            {
                _awaitingSync = false;
                UpdateObserver();
                _logger.LogDebug("{Group} caught up through {LastSeq}: may lead", Name, lastSeq);
            }
            return;
        }
        if (data.Length > 0 && data[0] is StreamPurgeOp.Op or StreamMsgDeleteOp.Op)
        {
            var answer = data[0] == StreamPurgeOp.Op
                ? StreamAdminOps.ApplyPurge(_stream, data.AsSpan(1), _activeLeader, _catchUpTo ??= CatchUp)
                : StreamAdminOps.ApplyMsgDelete(_stream, data.AsSpan(1), _activeLeader);
            if (answer is not null)
            {
                _answers.Add(answer);
            }
            return;
        }
        if (!StreamMsgEntry.TryDecode(data, out var entry))
        {
            return;
        }
        var (seq, error) = _stream.Ingest.ApplyReplicated(entry, _catchUpTo ??= CatchUp);
        // A new leader also answers the entries of earlier terms it applies before it takes publishes (as Go's leader
        // does): they are committed, so the publishers the old leader left waiting get their PubAck instead of a timeout.
        if (_node is { Role: RaftRole.Leader } && !entry.Reply.IsEmpty && (seq > 0 || error is not null) && !_stream.Config.NoAck)
        {
            _acks.Add((entry.Reply.ToArray(), seq, error));
        }
    }

    public void AfterApply()
    {
        // What this batch stored reaches the operating system before anything is answered, so a killed process
        // never comes back with a store that claims sequences it lost.
        _stream.Store.FlushAllPending();
        if (!_activeLeader && !_stopping && _node is { Role: RaftRole.Leader } node && node.AppliedIndex >= _readyAt)
        {
            _stream.Ingest.BecomeReplicatedLeader(_epoch);
            _activeLeader = true;
            // A replica whose store is behind where this leader's log continues (one a scale-up added) catches up now,
            // and from then on may lead.
            node.Propose(StreamCatchup.SyncEntry(_stream.Store.State().LastSeq));
            _stream.StartCapture();
            _logger.LogInformation("JetStream cluster new stream leader for '{Account} > {Stream}'", Assignment.Account, Assignment.Stream);
            ClusterAdvisories.StreamLeaderElected(_meta, _stream, Status, Assignment.Peers);
            if (Interlocked.Exchange(ref _onFirstLeader, null) is { } first)
            {
                first(this);
            }
        }
        if (_acks.Count > 0)
        {
            _stream.Ingest.SendReplicatedAcks(_acks);
            _acks.Clear();
        }
        foreach (var answer in _answers)
        {
            answer();
        }
        _answers.Clear();
    }

    // A replica still copying from its leader would describe a store that lacks messages the dropped log names.
    public bool CanSnapshot => _behindTo == 0 && !_awaitingSync;

    public byte[] CreateSnapshot()
    {
        var store = _stream.Store;
        // The entries the snapshot replaces are all that would repair a store that lost unsynced writes (a power cut):
        // the store must hold them durably before they go.
        store.FlushAllPending();
        store.WhenDurable().Wait();
        Nats.Storage.StreamState state;
        ulong[] deleted;
        lock (_stream.Gate)
        {
            state = store.State();
            deleted = store.DeletedSeqs();
        }
        return new StreamSnapshot(state.Msgs, state.Bytes, state.FirstSeq, state.LastSeq, deleted).Encode();
    }

    /// <summary>
    /// Go's processSnapshot: what lies below the snapshot's first sequence and its deleted sequences go, then the
    /// messages up to its last sequence are copied from the leader. At start (no leader known yet) or when the leader
    /// does not answer, the replica stays behind and does not campaign; it catches up once it hears from a leader.
    /// </summary>
    public void Restore(byte[] data)
    {
        if (StreamSnapshot.TryDecode(data) is not { } snapshot)
        {
            return;
        }
        var store = _stream.Store;
        lock (_stream.Gate)
        {
            var state = store.FastState();
            if (snapshot.FirstSeq > state.FirstSeq)
            {
                store.Compact(snapshot.FirstSeq);
                state = store.FastState();
            }
            foreach (var seq in snapshot.Deleted)
            {
                if (seq >= state.FirstSeq && seq <= state.LastSeq)
                {
                    store.RemoveMsg(seq);
                }
            }
        }
        if (store.FastState().LastSeq >= snapshot.LastSeq)
        {
            return;
        }
        _behindTo = snapshot.LastSeq;
        UpdateObserver();
        _logger.LogDebug("{Group} store at {Last} is behind the snapshot's {LastSeq}", Name, store.FastState().LastSeq, snapshot.LastSeq);
        StartSnapshotCatchUp();
    }

    // Go's processSnapshot pauses applying, not the group: the copy runs off the RAFT loop, so this replica keeps
    // answering appends and votes (a leader handing over, or a candidate, may need it) while the entries after the
    // snapshot wait (CanApply). Retried for as long as it is behind and hears from a leader.
    private void StartSnapshotCatchUp()
    {
        if (_behindTo == 0 || _snapshotCatchUpRunning || _stopping || _runner is not { } runner || _catchup is not { } catchup
            || _node is not { Role: not RaftRole.Leader, Leader: not null })
        {
            return;
        }
        _snapshotCatchUpRunning = true;
        var to = _behindTo;
        _ = Task.Run(() =>
        {
            var done = catchup.CatchUp(to);
            runner.Post((_, _) =>
            {
                _snapshotCatchUpRunning = false;
                if (done && _behindTo > 0 && _stream.Store.FastState().LastSeq >= _behindTo)
                {
                    CaughtUpToSnapshot();
                }
                else
                {
                    StartSnapshotCatchUp();
                }
            });
        });
    }

    private void CaughtUpToSnapshot()
    {
        _logger.LogDebug("{Group} caught up through the snapshot's {LastSeq}", Name, _behindTo);
        _behindTo = 0;
        // The leader's snapshot described its whole store, older messages included: a scale-up's replica whose
        // sync entry was compacted away is complete now.
        _awaitingSync = false;
        UpdateObserver();
    }

    public bool CanApply => _behindTo == 0;

    /// <summary>
    /// Leading with a store behind the group's snapshot happens only to a memory replica (a file replica behind never
    /// campaigns), e.g. when every replica of a memory stream restarted and none has the messages to copy: sequences
    /// continue after the snapshot's, so none is numbered twice, and applying resumes.
    /// </summary>
    private void SkipToSnapshot()
    {
        if (_behindTo == 0)
        {
            return;
        }
        lock (_stream.Gate)
        {
            var last = _stream.Store.FastState().LastSeq;
            if (last < _behindTo)
            {
                _logger.LogWarning("JetStream cluster stream '{Account} > {Stream}' leads without messages {From} to {To}: no replica had them",
                    Assignment.Account, Assignment.Stream, last + 1, _behindTo);
                _stream.Store.SkipMsgs(last + 1, _behindTo - last);
            }
        }
        _behindTo = 0;
        UpdateObserver();
    }

    public void LeaderChanged(string? leader, ulong term)
    {
        if (leader is null && _node is { SteppingDownWithoutQuorum: true } && DateTime.UtcNow - _quorumLostSent >= ClusterAdvisories.QuorumLostInterval)
        {
            _quorumLostSent = DateTime.UtcNow;
            _logger.LogWarning("JetStream cluster stream '{Account} > {Stream}' has NO quorum, stalled", Assignment.Account, Assignment.Stream);
            ClusterAdvisories.StreamQuorumLost(_meta, _stream, Status, Assignment.Peers);
        }
        if (_activeLeader)
        {
            _activeLeader = false;
            _stream.StopCapture();
        }
        _epoch++;
        _acks.Clear();
        _answers.Clear();
        if (leader == _meta.PeerId && _node is { } node)
        {
            SkipToSnapshot();
            // The leader's first entry (its peer state) follows: once that is applied, so is every earlier entry.
            _readyAt = node.LastIndex + 1;
        }
        else if (leader is not null)
        {
            // Another member leads: it answers the create, if anyone still has to.
            _onFirstLeader = null;
            _handOver.OtherLeads();
            // Called while the node takes the new leader in: the catch-up starts once it has.
            _runner?.Post((_, _) => StartSnapshotCatchUp());
        }
    }

    /// <summary>Go's ClusterInfo for the stream's info: the leader and, on the leader, the other replicas as it sees them.</summary>
    public StreamClusterInfo ClusterInfo() => GroupClusterInfo.Build(_meta, Status, Assignment.Peers, _activeLeader);

    public string LeaderName => Status.Leader is { } leader ? _meta.NameOf(leader) ?? "" : "";

    public async ValueTask DisposeAsync()
    {
        // A leader being stopped (the stream deleted or scaled down) must not take publishes again while its loop winds down.
        _stopping = true;
        _activeLeader = false;
        _catchup?.Stop();
        if (_runner is { } runner)
        {
            await runner.DisposeAsync().ConfigureAwait(false);
        }
        try
        {
            // Before the log may go (a scale-down to one replica deletes it): what only it held durably is synced here.
            await _stream.Store.SetLogBacked(false).AsTask().ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or Nats.Storage.StoreException)
        {
            _logger.LogWarning("JetStream cluster stream '{Account} > {Stream}' store sync on leaving its group failed: {Error}",
                Assignment.Account, Assignment.Stream, e.Message);
        }
        _store?.Dispose();
    }

    /// <summary>Removes the group's log (the stream was deleted).</summary>
    public void DeleteLog()
    {
        var directory = Path.Combine(_meta.StoreDirectory, Assignment.Account, "_js_", Name);
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }
}
