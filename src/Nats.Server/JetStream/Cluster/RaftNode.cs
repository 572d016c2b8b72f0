using System.Text;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// One member of a RAFT group: election, replication, commit, snapshots. Single-threaded and clock-free:
/// the owner serialises every call and passes the time in milliseconds, so the same code runs under a
/// seeded in-process simulation and under <c>RaftRunner</c> in the server.
/// </summary>
/// <remarks>
/// The durability rule that Go does not have: nothing is acknowledged before it is fsynced. A follower's
/// success answers wait in <c>_afterSync</c> until the log is synced through the index they report (one fsync for
/// everything appended before the round began: group commit, run by the store off this loop, which keeps
/// receiving, sending and applying meanwhile), and the leader counts itself towards a quorum only for entries it
/// has synced. A candidate syncs before it asks for votes and a vote is granted only
/// to a log at least as up to date, so a committed (acknowledged) entry is on a quorum's disks and every
/// possible leader has it.
/// </remarks>
internal sealed class RaftNode
{
    private readonly RaftOptions _options;
    private readonly bool _growable;
    private readonly IRaftStore _store;
    private readonly IRaftTransport _transport;
    private readonly IRaftStateMachine _fsm;
    private readonly Random _random;
    private readonly Action<string>? _log;
    private readonly HashSet<string> _peers;
    private readonly Dictionary<string, PeerProgress> _progress = [];
    private readonly HashSet<string> _votes = [];
    private readonly List<(string Peer, ulong Index, byte[] Payload)> _afterSync = [];
    private readonly List<(RaftEntryType Type, byte[] Data)> _unsent = [];
    private ulong _unsentFrom;
    private ulong _durableLast;
    private ulong _sinceSnapshot;
    private long _bytesSinceSnapshot;
    private long _lastSnapshotAt;
    private long _electionDeadline;
    private long _nextHeartbeat;
    private long _leaderSince;

    // The term in which the leader handed leadership to this node (a LeaderTransfer entry naming it).
    private ulong _transferTerm;

    /// <param name="growable">Whether a member beyond <paramref name="clusterSize"/> is taken in (growing the size, as Go's
    /// meta group grows when servers join) rather than refused.</param>
    public RaftNode(string id, IEnumerable<string> peers, int clusterSize, RaftOptions options, IRaftStore store,
        IRaftTransport transport, IRaftStateMachine fsm, Random random, long now, Action<string>? log = null, bool growable = false)
    {
        Id = id;
        _growable = growable;
        _peers = [.. peers, id];
        ClusterSize = Math.Max(clusterSize, _peers.Count);
        _options = options;
        _store = store;
        _transport = transport;
        _fsm = fsm;
        _random = random;
        _log = log;
        Term = store.State.Term;
        Vote = store.State.Vote;
        if (store.Snapshot is { } snapshot)
        {
            fsm.Restore(snapshot.Data);
            CommitIndex = AppliedIndex = snapshot.Index;
        }
        _durableLast = store.DurableIndex;
        _lastSnapshotAt = now;
        ResetElection(now);
    }

    public string Id { get; }

    public RaftRole Role { get; private set; }

    public ulong Term { get; private set; }

    public string Vote { get; private set; }

    public string? Leader { get; private set; }

    public ulong CommitIndex { get; private set; }

    public ulong AppliedIndex { get; private set; }

    public ulong LastIndex => _store.LastIndex;

    /// <summary>Committed entries are still to be applied (<see cref="RaftOptions.MaxApplyPerFlush"/>): flush again soon.</summary>
    public bool ApplyPending => AppliedIndex < CommitIndex && _fsm.CanApply;

    /// <summary>
    /// A member that must not lead yet (it votes and follows, but never campaigns): a stream replica a scale-up added,
    /// whose store lacks what the group's log does not hold until it has caught up. Set by the state machine.
    /// </summary>
    public bool Observer { get; set; }

    /// <summary>True while the leader steps down because no quorum answered it (read by the state machine's leader change, for Go's quorum-lost advisory).</summary>
    public bool SteppingDownWithoutQuorum { get; private set; }

    /// <summary>The expected group size the quorum is counted against (known members may be fewer).</summary>
    public int ClusterSize { get; private set; }

    public int Quorum => (ClusterSize / 2) + 1;

    public IReadOnlyCollection<string> Peers => _peers;

    /// <summary>Malformed or foreign messages refused (counted, never acted on).</summary>
    public long Refused { get; private set; }

    /// <summary>The leader's view of a follower (null on followers or for an unknown peer).</summary>
    public PeerProgress? ProgressOf(string peer) => Role == RaftRole.Leader && _progress.TryGetValue(peer, out var p) ? p : null;

    /// <summary>Campaigns at the next tick (the first member of a new group, so that it has a leader at once).</summary>
    public void CampaignNow(long now) => _electionDeadline = Role == RaftRole.Leader ? _electionDeadline : now;

    /// <summary>Appends an entry on the leader; returns its index, or 0 when this node is not the leader.</summary>
    public ulong Propose(byte[] data) => Role == RaftRole.Leader ? AppendLocal(RaftEntryType.Normal, data) : 0;

    public void Receive(RaftMessageKind kind, ReadOnlySpan<byte> payload, long now)
    {
        switch (kind)
        {
            case RaftMessageKind.VoteRequest when RaftWire.TryDecode(payload, out VoteRequest request):
                OnVoteRequest(request, now);
                break;
            case RaftMessageKind.VoteResponse when RaftWire.TryDecode(payload, out VoteResponse response):
                OnVoteResponse(response, now);
                break;
            case RaftMessageKind.AppendEntry when RaftWire.TryDecode(payload, out AppendEntry? append):
                OnAppendEntry(append!, now);
                break;
            case RaftMessageKind.AppendEntryResponse when RaftWire.TryDecode(payload, out AppendEntryResponse response):
                OnAppendEntryResponse(response, now);
                break;
            default:
                Refused++;
                break;
        }
    }

    /// <summary>Timers: heartbeats, catch-up retries and lost quorum on the leader, the election timeout elsewhere.</summary>
    public void Tick(long now)
    {
        if (Role != RaftRole.Leader)
        {
            if (now >= _electionDeadline)
            {
                Campaign(now);
            }
            return;
        }
        if (now >= _nextHeartbeat)
        {
            BroadcastUnsent(now);
            var heartbeat = new AppendEntry(Id, Term, CommitIndex, _store.TermAt(LastIndex), LastIndex, [], Term);
            _transport.Broadcast(RaftMessageKind.AppendEntry, RaftWire.Encode(heartbeat));
            _nextHeartbeat = now + _options.HeartbeatMs;
        }
        var heard = 1;
        foreach (var (peer, progress) in _progress)
        {
            if (progress.CatchingUp && now >= progress.InFlightUntil)
            {
                SendCatchup(peer, progress, now);
            }
            if (now - progress.LastSeen < _options.LostQuorumMs)
            {
                heard++;
            }
        }
        if (heard < Quorum && now - _leaderSince >= _options.LostQuorumMs)
        {
            _log?.Invoke($"RAFT [{Id}] lost quorum in term {Term}, stepping down");
            SteppingDownWithoutQuorum = true;
            BecomeFollower(Term, null, now);
            SteppingDownWithoutQuorum = false;
        }
    }

    /// <summary>
    /// Ends a batch of calls: broadcasts the leader's new entries, starts syncing what was appended (the store's
    /// group commit; the owner calls again when a round ends), sends the acknowledgements the synced entries allow,
    /// then commits and applies.
    /// </summary>
    public void Flush(long now)
    {
        BroadcastUnsent(now);
        _store.BeginSync();
        _durableLast = _store.DurableIndex;
        SendSynced();
        ApplyAndNotify();
        if (SnapshotDue(now))
        {
            Compact(now);
        }
    }

    private bool SnapshotDue(long now)
    {
        if (_sinceSnapshot == 0 || !_fsm.CanSnapshot)
        {
            return false;
        }
        var elapsed = now - _lastSnapshotAt;
        if (_options.SnapshotIntervalMs > 0 && elapsed >= _options.SnapshotIntervalMs)
        {
            return true;
        }
        var large = (_options.SnapshotAfterEntries > 0 && _sinceSnapshot >= (ulong)_options.SnapshotAfterEntries)
            || (_options.SnapshotAfterBytes > 0 && _bytesSinceSnapshot >= _options.SnapshotAfterBytes);
        return large && elapsed >= _options.SnapshotMinIntervalMs;
    }

    /// <summary>Snapshots the state machine at the applied index and drops the log before it.</summary>
    public void Compact(long now)
    {
        if (AppliedIndex < _store.FirstIndex)
        {
            return;
        }
        // The term is read before the state machine runs: its snapshot may take a while (a stream fsyncs its store).
        var index = AppliedIndex;
        var term = _store.TermAt(index);
        _store.SaveSnapshot(new RaftSnapshot(index, term, _fsm.CreateSnapshot()), keepLog: true);
        _durableLast = _store.DurableIndex;
        _sinceSnapshot = 0;
        _bytesSinceSnapshot = 0;
        _lastSnapshotAt = now;
    }

    /// <summary>
    /// Gives up leadership: the most up-to-date follower (one at random among equals) is told (a LeaderTransfer entry, as Go) to campaign at
    /// once, and this node stays out of the next election. Returns false when this node is not the leader.
    /// </summary>
    /// <param name="unready">Followers known to be unable to lead now (a stream replica still copying messages): passed
    /// over unless no other follower is current.</param>
    public bool StepDown(long now, Func<string, bool>? unready = null)
    {
        if (Role != RaftRole.Leader)
        {
            return false;
        }
        var target = PickSuccessor(now, unready) ?? (unready is null ? null : PickSuccessor(now, null));
        if (target is not null)
        {
            AppendLocal(RaftEntryType.LeaderTransfer, Encoding.ASCII.GetBytes(target));
            BroadcastUnsent(now);
        }
        BecomeFollower(Term, null, now);
        _electionDeadline = now + (2 * _options.ElectionMaxMs);
        return true;
    }

    private string? PickSuccessor(long now, Func<string, bool>? unready)
    {
        // Among the most up-to-date followers one at random, as Go's map order picks one: a fixed choice would pass
        // leadership back and forth between the same two members of a larger group.
        string? target = null;
        ulong best = 0;
        var ties = 0;
        foreach (var (peer, progress) in _progress)
        {
            if (now - progress.LastSeen >= _options.LostQuorumMs || (unready is not null && unready(peer)))
            {
                continue;
            }
            if (target is null || progress.Match > best)
            {
                target = peer;
                best = progress.Match;
                ties = 1;
            }
            else if (progress.Match == best && _random.Next(++ties) == 0)
            {
                target = peer;
            }
        }
        return target;
    }

    private void OnVoteRequest(VoteRequest request, long now)
    {
        if (request.Candidate == Id || !Learn(request.Candidate))
        {
            return;
        }
        if (request.Term > Term)
        {
            BecomeFollower(request.Term, null, now);
        }
        var granted = false;
        if (request.Term == Term && (Vote.Length == 0 || Vote == request.Candidate) && UpToDate(request.LastTerm, request.LastIndex))
        {
            if (Vote != request.Candidate)
            {
                SaveState(Term, request.Candidate);
            }
            granted = true;
            ResetElection(now);
        }
        _transport.Send(request.Candidate, RaftMessageKind.VoteResponse, RaftWire.Encode(new VoteResponse(Term, Id, granted)));
    }

    private void OnVoteResponse(VoteResponse response, long now)
    {
        if (response.Peer == Id || !Learn(response.Peer))
        {
            return;
        }
        if (response.Term > Term)
        {
            BecomeFollower(response.Term, null, now);
            return;
        }
        if (Role == RaftRole.Candidate && response.Term == Term && response.Granted)
        {
            _votes.Add(response.Peer);
            if (_votes.Count >= Quorum)
            {
                BecomeLeader(now);
            }
        }
    }

    private void OnAppendEntry(AppendEntry append, long now)
    {
        if (append.Leader == Id || !Learn(append.Leader))
        {
            return;
        }
        if (append.Term < Term)
        {
            Respond(append.Leader, LastIndex, success: false);
            return;
        }
        if (append.Term > Term || Role != RaftRole.Follower || Leader != append.Leader)
        {
            BecomeFollower(append.Term, append.Leader, now);
        }
        else if (_transferTerm != Term)
        {
            // Not once the leader handed over to this node: an append it sent before the transfer and delivered after
            // it would otherwise put the campaign off by a whole election timeout.
            ResetElection(now);
        }

        if (append.Entries.Count > 0 && append.Entries[0].Type == RaftEntryType.Snapshot)
        {
            InstallSnapshot(append);
            return;
        }
        if (append.PrevIndex > LastIndex)
        {
            Respond(append.Leader, LastIndex, success: false);
            return;
        }
        if (append.PrevIndex + 1 >= _store.FirstIndex && _store.TermAt(append.PrevIndex) != append.PrevTerm)
        {
            if (append.PrevIndex > CommitIndex)
            {
                Truncate(append.PrevIndex - 1);
            }
            else
            {
                _log?.Invoke($"RAFT [{Id}] leader {append.Leader} disagrees at committed index {append.PrevIndex}");
            }
            Respond(append.Leader, Math.Min(LastIndex, append.PrevIndex - 1), success: false);
            return;
        }

        var index = append.PrevIndex;
        foreach (var (type, data) in append.Entries)
        {
            index++;
            if (index < _store.FirstIndex)
            {
                continue;
            }
            if (index <= LastIndex)
            {
                if (_store.TermAt(index) == append.EntryTerm)
                {
                    continue;
                }
                if (index <= CommitIndex)
                {
                    _log?.Invoke($"RAFT [{Id}] leader {append.Leader} would overwrite committed index {index}");
                    Refused++;
                    return;
                }
                Truncate(index - 1);
            }
            _store.Append(new RaftEntry(append.EntryTerm, type, data));
            if (type == RaftEntryType.LeaderTransfer && Encoding.ASCII.GetString(data) == Id)
            {
                _electionDeadline = now;
                _transferTerm = Term;
            }
            else if (type == RaftEntryType.LeaderTransfer && append.EntryTerm == Term)
            {
                // Handed to another member, which campaigns at once if it can; if it cannot, this one does soon, not
                // after a whole election timeout (the leader that handed over sends no more appends).
                _electionDeadline = Math.Min(_electionDeadline, now + _options.HandOverFallbackMs);
                _transferTerm = Term;
            }
        }
        var commit = Math.Min(append.Commit, index);
        if (commit > CommitIndex)
        {
            CommitIndex = commit;
        }
        _afterSync.Add((append.Leader, index, RaftWire.Encode(new AppendEntryResponse(Term, index, Id, true))));
    }

    private void InstallSnapshot(AppendEntry append)
    {
        if (append.PrevIndex > CommitIndex)
        {
            var keep = append.PrevIndex >= _store.FirstIndex && append.PrevIndex <= LastIndex && _store.TermAt(append.PrevIndex) == append.PrevTerm;
            var data = append.Entries[0].Data;
            _store.SaveSnapshot(new RaftSnapshot(append.PrevIndex, append.PrevTerm, data), keep);
            _fsm.Restore(data);
            CommitIndex = AppliedIndex = append.PrevIndex;
            _durableLast = _store.DurableIndex;
            _sinceSnapshot = 0;
            _bytesSinceSnapshot = 0;
            _log?.Invoke($"RAFT [{Id}] installed the leader's snapshot through index {append.PrevIndex}");
        }
        _afterSync.Add((append.Leader, append.PrevIndex, RaftWire.Encode(new AppendEntryResponse(Term, append.PrevIndex, Id, true))));
    }

    private void OnAppendEntryResponse(AppendEntryResponse response, long now)
    {
        if (response.Peer == Id || !Learn(response.Peer))
        {
            return;
        }
        if (response.Term > Term)
        {
            BecomeFollower(response.Term, null, now);
            return;
        }
        if (Role != RaftRole.Leader || response.Term != Term)
        {
            return;
        }
        var progress = Progress(response.Peer, now);
        progress.LastSeen = now;
        if (response.Success)
        {
            if (response.Index > progress.Match)
            {
                progress.Match = response.Index;
            }
            progress.Next = Math.Max(progress.Next, response.Index + 1);
            MaybeCommit();
            if (progress.CatchingUp)
            {
                progress.InFlightUntil = 0;
                SendCatchup(response.Peer, progress, now);
            }
            return;
        }
        progress.Next = Math.Min(response.Index, LastIndex) + 1;
        progress.CatchingUp = true;
        if (now >= progress.InFlightUntil)
        {
            SendCatchup(response.Peer, progress, now);
        }
    }

    private void SendCatchup(string peer, PeerProgress progress, long now)
    {
        if (progress.Next > LastIndex)
        {
            progress.CatchingUp = false;
            return;
        }
        AppendEntry append;
        if (progress.Next < _store.FirstIndex && _store.Snapshot is { } snapshot)
        {
            append = new AppendEntry(Id, Term, CommitIndex, snapshot.Term, snapshot.Index, [(RaftEntryType.Snapshot, snapshot.Data)], Term);
        }
        else
        {
            var from = Math.Max(progress.Next, _store.FirstIndex);
            var entryTerm = _store.TermAt(from);
            var entries = new List<(RaftEntryType, byte[])>();
            var bytes = 0;
            for (var i = from; i <= LastIndex && entries.Count < _options.MaxEntriesPerAppend && bytes < _options.MaxBytesPerAppend; i++)
            {
                var entry = _store.EntryAt(i);
                if (entry.Term != entryTerm)
                {
                    break;
                }
                entries.Add((entry.Type, entry.Data));
                bytes += entry.Data.Length;
            }
            append = new AppendEntry(Id, Term, CommitIndex, _store.TermAt(from - 1), from - 1, entries, entryTerm);
        }
        _transport.Send(peer, RaftMessageKind.AppendEntry, RaftWire.Encode(append));
        progress.InFlightUntil = now + _options.CatchupRetryMs;
    }

    private void Campaign(long now)
    {
        if (Observer)
        {
            ResetElection(now);
            return;
        }
        // Our log is what a voter compares against: it must be on disk before anyone relies on it.
        _store.Sync();
        _durableLast = _store.DurableIndex;
        _afterSync.Clear();
        SaveState(Term + 1, Id);
        Role = RaftRole.Candidate;
        SetLeader(null);
        _votes.Clear();
        _votes.Add(Id);
        ResetElection(now);
        _log?.Invoke($"RAFT [{Id}] campaigning in term {Term}");
        if (_votes.Count >= Quorum)
        {
            BecomeLeader(now);
            return;
        }
        var request = new VoteRequest(Term, _store.TermAt(LastIndex), LastIndex, Id);
        _transport.Broadcast(RaftMessageKind.VoteRequest, RaftWire.Encode(request));
    }

    private void BecomeLeader(long now)
    {
        Role = RaftRole.Leader;
        _leaderSince = now;
        _progress.Clear();
        foreach (var peer in _peers)
        {
            if (peer != Id)
            {
                _progress[peer] = new PeerProgress(LastIndex + 1, now);
            }
        }
        SetLeader(Id);
        _log?.Invoke($"RAFT [{Id}] is leader in term {Term}");
        // Go's peer state entry doubles as Raft's no-op: committing it commits every earlier term's entries.
        AppendLocal(RaftEntryType.PeerState, RaftWire.EncodePeerState(ClusterSize, _peers));
        _nextHeartbeat = now + _options.HeartbeatMs;
    }

    private void BecomeFollower(ulong term, string? leader, long now)
    {
        if (term > Term)
        {
            SaveState(term, "");
        }
        Role = RaftRole.Follower;
        _unsent.Clear();
        _progress.Clear();
        SetLeader(leader);
        ResetElection(now);
    }

    private void SetLeader(string? leader)
    {
        if (leader != Leader)
        {
            Leader = leader;
            _fsm.LeaderChanged(leader, Term);
        }
    }

    private ulong AppendLocal(RaftEntryType type, byte[] data)
    {
        var index = LastIndex + 1;
        _store.Append(new RaftEntry(Term, type, data));
        if (_unsent.Count == 0)
        {
            _unsentFrom = index;
        }
        _unsent.Add((type, data));
        return index;
    }

    private void BroadcastUnsent(long now)
    {
        if (_unsent.Count == 0 || Role != RaftRole.Leader)
        {
            _unsent.Clear();
            return;
        }
        var at = 0;
        while (at < _unsent.Count)
        {
            var count = Math.Min(_options.MaxEntriesPerAppend, _unsent.Count - at);
            var prev = _unsentFrom + (ulong)at - 1;
            var append = new AppendEntry(Id, Term, CommitIndex, _store.TermAt(prev), prev, _unsent.GetRange(at, count), Term);
            _transport.Broadcast(RaftMessageKind.AppendEntry, RaftWire.Encode(append));
            at += count;
        }
        _unsent.Clear();
        _nextHeartbeat = now + _options.HeartbeatMs;
    }

    private void MaybeCommit()
    {
        if (Role != RaftRole.Leader)
        {
            return;
        }
        Span<ulong> matches = stackalloc ulong[_progress.Count + 1];
        matches[0] = _durableLast;
        var n = 1;
        foreach (var progress in _progress.Values)
        {
            matches[n++] = progress.Match;
        }
        if (n < Quorum)
        {
            return;
        }
        matches.Sort();
        var candidate = matches[n - Quorum];
        if (candidate > CommitIndex && _store.TermAt(candidate) == Term)
        {
            CommitIndex = candidate;
        }
    }

    private void ApplyAndNotify()
    {
        MaybeCommit();
        var applied = AppliedIndex;
        ApplyCommitted();
        if (AppliedIndex != applied)
        {
            _fsm.AfterApply();
        }
    }

    private void ApplyCommitted()
    {
        if (!_fsm.CanApply)
        {
            return;
        }
        var budget = _options.MaxApplyPerFlush > 0 ? _options.MaxApplyPerFlush : int.MaxValue;
        while (AppliedIndex < CommitIndex && budget-- > 0)
        {
            var index = AppliedIndex + 1;
            var entry = _store.EntryAt(index);
            if (entry.Type == RaftEntryType.Normal)
            {
                _fsm.Apply(index, entry.Data);
            }
            else if (entry.Type == RaftEntryType.PeerState && RaftWire.TryDecodePeerState(entry.Data, out var size, out var peers))
            {
                foreach (var peer in peers)
                {
                    _peers.Add(peer);
                }
                ClusterSize = Math.Max(size, _peers.Count);
            }
            AppliedIndex = index;
            _sinceSnapshot++;
            _bytesSinceSnapshot += entry.Data.Length;
        }
    }

    private void Truncate(ulong after)
    {
        _store.TruncateAfter(after);
        _durableLast = Math.Min(_durableLast, after);
        // An answer still waiting for its sync would vouch for entries that are gone now.
        _afterSync.RemoveAll(pending => pending.Index > after);
    }

    /// <summary>The answers waiting for entries that are synced now (the others wait on, in order).</summary>
    private void SendSynced()
    {
        if (_afterSync.Count == 0)
        {
            return;
        }
        var kept = 0;
        for (var i = 0; i < _afterSync.Count; i++)
        {
            var pending = _afterSync[i];
            if (pending.Index <= _durableLast)
            {
                _transport.Send(pending.Peer, RaftMessageKind.AppendEntryResponse, pending.Payload);
            }
            else
            {
                _afterSync[kept++] = pending;
            }
        }
        _afterSync.RemoveRange(kept, _afterSync.Count - kept);
    }

    private void Respond(string peer, ulong index, bool success) =>
        _transport.Send(peer, RaftMessageKind.AppendEntryResponse, RaftWire.Encode(new AppendEntryResponse(Term, index, Id, success)));

    private bool UpToDate(ulong lastTerm, ulong lastIndex)
    {
        var ours = _store.TermAt(LastIndex);
        return lastTerm > ours || (lastTerm == ours && lastIndex >= LastIndex);
    }

    private PeerProgress Progress(string peer, long now)
    {
        if (!_progress.TryGetValue(peer, out var progress))
        {
            progress = new PeerProgress(LastIndex + 1, now);
            _progress[peer] = progress;
        }
        return progress;
    }

    /// <summary>A member we did not know joins while the group is below its size; beyond it, a stranger is refused.</summary>
    private bool Learn(string peer)
    {
        if (_peers.Contains(peer))
        {
            return true;
        }
        if (_peers.Count >= ClusterSize)
        {
            if (!_growable)
            {
                Refused++;
                return false;
            }
            ClusterSize = _peers.Count + 1;
        }
        _peers.Add(peer);
        _log?.Invoke($"RAFT [{Id}] learned peer {peer} (cluster size {ClusterSize})");
        if (Role == RaftRole.Leader)
        {
            // The followers learn the grown peer set from the log, as from Go's leader (its peer-add entry): a follower
            // hears only from the leader and would otherwise keep the size it had at the election.
            AppendLocal(RaftEntryType.PeerState, RaftWire.EncodePeerState(ClusterSize, _peers));
        }
        return true;
    }

    private void SaveState(ulong term, string vote)
    {
        _store.SaveState(term, vote);
        Term = term;
        Vote = vote;
    }

    private void ResetElection(long now) =>
        _electionDeadline = now + _options.ElectionMinMs + _random.NextInt64(_options.ElectionMaxMs - _options.ElectionMinMs + 1);
}
