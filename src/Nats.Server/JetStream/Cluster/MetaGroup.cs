using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Hosting;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's JetStream meta group <c>_meta_</c>: every JetStream server of the cluster is a member (peer id
/// <c>getHash(server_name)</c>), its RAFT log lives in <c>&lt;store&gt;/jetstream/$SYS/_js_/_meta_/</c> and its
/// leader answers <c>$JS.API.META.LEADER.STEPDOWN</c>. Stream and durable consumer assignments are replicated into
/// <see cref="MetaState"/>; the servers they place a replica on create it when applying them.
/// </summary>
internal sealed class MetaGroup : IAsyncDisposable
{
    public const string GroupName = "_meta_";

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly MetaState _state;
    private readonly Dictionary<(string Account, string Stream), StreamAssignment> _assignments = [];
    private readonly Dictionary<(string Account, string Stream, string Consumer), ConsumerAssignment> _consumers = [];
    private JetStreamService? _service;
    private ReplicatedStreams? _replicated;
    private RaftRunner? _runner;
    private FileRaftStore? _store;

    public MetaGroup(NatsServer server, ILogger logger)
    {
        _server = server;
        _logger = logger;
        PeerId = NameHash.Of(server.ServerName);
        _state = new MetaState(this);
    }

    public string PeerId { get; }

    public NatsServer Server => _server;

    public string StoreDirectory { get; private set; } = "";

    /// <summary>Stream info scatter and gather for cluster-wide listings (null until started).</summary>
    public StreamInfoGather? Gather { get; private set; }

    /// <summary>The replicated streams this server holds replicas of (null until started).</summary>
    public ReplicatedStreams? Replicated => _replicated;

    public string ClusterName => _server.Options.Cluster.Name;

    public RaftStatus Status => _runner?.Status ?? RaftStatus.Initial;

    public bool IsLeader => Status.Role == RaftRole.Leader;

    /// <summary>
    /// Go's expected size at bootstrap: at least 2, at least the configured routes; the group grows as peers
    /// appear (each server's own route, if listed, counts, as in Go).
    /// </summary>
    public int ExpectedSize => Math.Max(2, _server.Options.Cluster.Routes.Count);

    public void Start(JetStreamService service, string storeDirectory, Account system)
    {
        _service = service;
        StoreDirectory = storeDirectory;
        _replicated = new ReplicatedStreams(this, service, system, _logger);
        var directory = Path.Combine(storeDirectory, "$SYS", "_js_", GroupName);
        _store = new FileRaftStore(directory, warning => _logger.LogWarning("{Warning}", warning));
        var transport = new NrgTransport(_server, system, GroupName, PeerId);
        var options = new RaftOptions();
        _logger.LogInformation(_store.LastIndex == 0 && _store.State.Term == 0 ? "JetStream cluster bootstrapping" : "JetStream cluster recovering state");
        var runner = new RaftRunner(now => new RaftNode(PeerId, [], ExpectedSize, options, _store, transport, _state, new Random(),
            now, message => _logger.LogDebug("{Message}", message), growable: true), _logger);
        _runner = runner;
        _store.Synced = runner.Wake;
        transport.Start(runner, _logger);
        SubscribeStepDown(system);
        Gather = new StreamInfoGather(this, service, _logger);
        Gather.Start(system);
    }

    /// <summary>The server name of a peer: ours, or a routed peer's from its INFO (Go's serverNameForNode).</summary>
    public string? NameOf(string peer)
    {
        if (peer == PeerId)
        {
            return _server.ServerName;
        }
        if (_server.Cluster is { } cluster)
        {
            foreach (var route in cluster.Table.Registered)
            {
                if (route.RemoteInfo is { ServerName.Length: > 0 } info && NameHash.Of(info.ServerName) == peer)
                {
                    return info.ServerName;
                }
            }
        }
        return null;
    }

    /// <summary>Go's processLeaderChange notices.</summary>
    internal void OnLeaderChanged(string? leader)
    {
        if (leader == PeerId)
        {
            _logger.LogInformation("Self is new JetStream cluster metadata leader");
        }
        else if (leader is null)
        {
            _logger.LogInformation("JetStream cluster no metadata leader");
        }
        else if (NameOf(leader) is { } name)
        {
            _logger.LogInformation("JetStream cluster new metadata leader: {Name}/{Cluster}", name, ClusterName);
        }
        else
        {
            _logger.LogInformation("JetStream cluster new remote metadata leader");
        }
    }

    /// <summary>Go's jsLeaderStepDownRequest for the meta group: only the leader answers.</summary>
    private void SubscribeStepDown(Account system)
    {
        var client = InternalClient.Create(_server, _server.NextClientId(), system, _logger);
        var publisher = _server.CreateInternalPublisher();
        InternalClient.Subscribe(client, "$JS.API.META.LEADER.STEPDOWN", "1", (_, _, _, reply, _, _) =>
        {
            if (_runner is not { } runner || !IsLeader)
            {
                return true;
            }
            var replyCopy = reply.ToArray();
            runner.Post((node, now) =>
            {
                if (node.StepDown(now) && replyCopy.Length > 0)
                {
                    lock (publisher)
                    {
                        publisher.Publish(system, replyCopy, default, default,
                            """{"type":"io.nats.jetstream.api.v1.meta_leader_stepdown_response","success":true}"""u8);
                    }
                }
            });
            return true;
        });
    }

    /// <summary>Go's MetaClusterInfo for /jsz: the replicas only on the leader.</summary>
    public Monitoring.MetaClusterInfo Info()
    {
        var status = Status;
        var leaderName = status.Leader is { } leader ? NameOf(leader) ?? "" : "";
        var info = new Monitoring.MetaClusterInfo
        {
            Name = ClusterName,
            Leader = leaderName,
            Peer = leaderName.Length == 0 ? "" : NameHash.Of(leaderName),
            Size = status.ClusterSize,
        };
        if (status.Role == RaftRole.Leader)
        {
            info.Replicas = [.. status.Peers.Select(p =>
            {
                var name = NameOf(p.Peer);
                var seen = p.LastSeenMs < 0 ? 0 : p.LastSeenMs;
                return new Monitoring.PeerInfo
                {
                    Name = name ?? $"Server name unknown at this time (peerID: {p.Peer})",
                    Current = p.Current && seen <= 10_000,
                    Offline = name is null,
                    Active = seen * 1_000_000,
                    Lag = name is null ? 0 : p.Lag,
                    Peer = p.Peer,
                };
            })];
        }
        return info;
    }

    /// <summary>
    /// Go's stepdownRaftNodes at a clean shutdown, while the routes are still up: the stream groups this server leads
    /// hand over (and wait, bounded, for the new leader), then the meta group if it leads.
    /// </summary>
    public async Task StepDownLeadersAsync()
    {
        if (_replicated is { } replicated)
        {
            await replicated.HandOverAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
        }
        if (_runner is { } runner && IsLeader)
        {
            await runner.Ask((node, now) => node.StepDown(now)).ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_replicated is { } replicated)
        {
            await replicated.DisposeAsync().ConfigureAwait(false);
        }
        if (_runner is { } runner)
        {
            await runner.DisposeAsync().ConfigureAwait(false);
        }
        _store?.Dispose();
    }

    internal int AppliedEntries => _state.Count;

    /// <summary>Proposes a meta entry (op byte, then its body) if this server still leads; lost otherwise.</summary>
    public void Propose(byte op, byte[] body)
    {
        var entry = new byte[1 + body.Length];
        entry[0] = op;
        body.CopyTo(entry, 1);
        _runner?.Post((node, _) => node.Propose(entry));
    }

    /// <summary>The peer a stream is placed on (an R1 stream's only one), or null when it is not assigned.</summary>
    public string? AssignedPeer(string account, string stream) => Assigned(account, stream)?.Peer;

    public StreamAssignment? Assigned(string account, string stream)
    {
        lock (_assignments)
        {
            return _assignments.GetValueOrDefault((account, stream));
        }
    }

    /// <summary>An account's stream assignments (Go's cc.streams[account]), sorted by stream name.</summary>
    public List<StreamAssignment> StreamsOf(string account)
    {
        lock (_assignments)
        {
            return [.. _assignments.Values.Where(a => a.Account == account).OrderBy(a => a.Stream, StringComparer.Ordinal)];
        }
    }

    /// <summary>How many replicated consumers of <paramref name="stream"/> the meta group holds.</summary>
    public int ConsumerCount(string account, string stream)
    {
        lock (_assignments)
        {
            return _consumers.Keys.Count(k => k.Account == account && k.Stream == stream);
        }
    }

    /// <summary>R1 placement: the member heard from lately that holds the fewest streams (ties at random).</summary>
    public string? PlaceOne() => Place(1)?[0];

    /// <summary>
    /// Placement of <paramref name="replicas"/> members: the members heard from lately (and this one) that hold the
    /// fewest stream replicas, ties at random; null when fewer are available.
    /// </summary>
    public List<string>? Place(int replicas) => Place(replicas, []);

    /// <summary>Placement of a scale-up: <paramref name="existing"/> first, then the least loaded others; null when too few.</summary>
    public List<string>? Place(int replicas, IReadOnlyList<string> existing)
    {
        var candidates = new List<string> { PeerId };
        candidates.AddRange(Status.Peers.Where(p => p.LastSeenMs is >= 0 and < 10_000).Select(p => p.Peer));
        if (replicas > 1 && _server.Cluster is { } cluster)
        {
            // A JetStream server routed to us is a candidate before the meta group has heard from it (as Go learns
            // peers from route INFO): right after an election the leader may know only a quorum.
            foreach (var route in cluster.Table.Registered)
            {
                if (route.RemoteInfo is { JetStream: true, ServerName.Length: > 0 } info && NameHash.Of(info.ServerName) is var peer && !candidates.Contains(peer))
                {
                    candidates.Add(peer);
                }
            }
        }
        if (candidates.Count < replicas)
        {
            return null;
        }
        lock (_assignments)
        {
            var load = candidates.ToDictionary(c => c, _ => 0);
            foreach (var assignment in _assignments.Values)
            {
                foreach (var peer in assignment.Peers)
                {
                    if (load.ContainsKey(peer))
                    {
                        load[peer]++;
                    }
                }
            }
            List<string> placed = [.. existing, .. load.Where(kv => !existing.Contains(kv.Key)).OrderBy(kv => kv.Value).ThenBy(_ => Random.Shared.Next())
                .Take(replicas - existing.Count).Select(kv => kv.Key)];
            return placed.Count < replicas ? null : placed;
        }
    }

    /// <summary>A replicated consumer's assignment, or null (an ephemeral or R1 consumer is not in the meta group).</summary>
    public ConsumerAssignment? AssignedConsumer(string account, string stream, string consumer)
    {
        lock (_assignments)
        {
            return _consumers.GetValueOrDefault((account, stream, consumer));
        }
    }

    internal void ClearAssignments()
    {
        lock (_assignments)
        {
            _assignments.Clear();
            _consumers.Clear();
        }
    }

    /// <summary>A committed consumer entry: recorded or removed, and carried out here when this server holds a replica.</summary>
    private void OnConsumerApplied(byte op, ConsumerAssignment assignment, bool replay)
    {
        var key = (assignment.Account, assignment.Stream, assignment.Name);
        if (op == ConsumerAssignment.RemoveOp)
        {
            lock (_assignments)
            {
                _consumers.Remove(key);
            }
            _replicated?.RemoveConsumer(assignment, answer: !replay && IsLeader);
            return;
        }
        lock (_assignments)
        {
            _consumers[key] = assignment;
        }
        if (assignment.Peers.Contains(PeerId))
        {
            _replicated?.AssignConsumer(assignment, replay);
        }
    }

    /// <summary>
    /// A committed meta entry: records or removes an assignment; a stream placed here is created (an R1 one answers
    /// the client at once, a replicated one starts its group).
    /// </summary>
    internal void OnApplied(byte[] entry, bool replay)
    {
        if (entry.Length >= 2 && entry[0] is ConsumerAssignment.Op or ConsumerAssignment.RemoveOp)
        {
            if (ConsumerAssignment.Decode(entry.AsSpan(1)) is { } consumer)
            {
                OnConsumerApplied(entry[0], consumer, replay);
            }
            return;
        }
        if (entry.Length < 2 || entry[0] is not (StreamAssignment.Op or StreamAssignment.RemoveOp or StreamAssignment.UpdateOp)
            || StreamAssignment.Decode(entry.AsSpan(1)) is not { } assignment)
        {
            return;
        }
        if (entry[0] == StreamAssignment.UpdateOp)
        {
            // Go's processUpdateStreamAssignment: only for a stream still assigned; every server (members old and new) acts.
            StreamAssignment? previous;
            lock (_assignments)
            {
                if (!_assignments.TryGetValue((assignment.Account, assignment.Stream), out previous))
                {
                    return;
                }
                _assignments[(assignment.Account, assignment.Stream)] = assignment;
            }
            _replicated?.Update(previous, assignment, replay);
            return;
        }
        if (entry[0] == StreamAssignment.RemoveOp)
        {
            lock (_assignments)
            {
                _assignments.Remove((assignment.Account, assignment.Stream));
                foreach (var key in _consumers.Keys.Where(k => k.Account == assignment.Account && k.Stream == assignment.Stream).ToList())
                {
                    _consumers.Remove(key);
                }
            }
            _replicated?.Remove(assignment, answer: !replay && IsLeader);
            return;
        }
        lock (_assignments)
        {
            _assignments[(assignment.Account, assignment.Stream)] = assignment;
        }
        if (assignment.Replicated)
        {
            if (assignment.Peers.Contains(PeerId))
            {
                _replicated?.Assign(assignment, replay);
            }
            return;
        }
        if (replay || assignment.Peer != PeerId || _service is not { } service || _server.FindAccount(assignment.Account) is not { } account)
        {
            return;
        }
        if (service.FindAccount(account)?.FindStream(assignment.Stream) is not null)
        {
            // Re-applied after a restart: the stream came back from disk.
            return;
        }
        // Off the RAFT loop: creating a stream does file I/O and publishes the answer.
        _ = Task.Run(() => service.Router.CreateAssigned(account, assignment.Subject, Encoding.UTF8.GetBytes(assignment.Reply), assignment.Config, assignment.Stream));
    }
}
