using System.Text;
using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

/// <summary>
/// A seeded, single-threaded, virtual-time cluster of <see cref="RaftNode"/>s: messages are delayed by a
/// random amount (so they reorder), dropped, duplicated or cut by partitions; an fsync takes time, and a
/// crash in between loses the unsynced tail (<see cref="MemoryRaftStore.Crash"/>). Every run with one seed is
/// the same run. It checks RAFT's safety properties as it goes and records every acknowledged value: one
/// that some node applied, i.e. that a leader committed on a quorum of fsynced logs.
/// </summary>
internal sealed class RaftSimulation
{
    private readonly PriorityQueue<Action, (long Time, long Seq)> _events = new();
    private readonly Dictionary<ulong, string> _leaders = [];
    private readonly Dictionary<ulong, string> _committed = [];
    private readonly HashSet<(int, int)> _cut = [];
    private long _seq;
    private int _nextValue;

    public RaftSimulation(int size, int seed, RaftOptions? options = null)
    {
        Random = new Random(seed);
        Options = options ?? new RaftOptions
        {
            HeartbeatMs = 100,
            ElectionMinMs = 300,
            ElectionMaxMs = 600,
            LostQuorumMs = 1000,
            CatchupRetryMs = 100,
            MaxEntriesPerAppend = 20,
            SnapshotAfterEntries = 50,
        };
        Nodes = [.. Enumerable.Range(0, size).Select(i => new SimNode(this, i, size))];
        foreach (var node in Nodes)
        {
            node.Start();
        }
    }

    public Random Random { get; }

    public RaftOptions Options { get; }

    public SimNode[] Nodes { get; }

    public long Now { get; private set; }

    public double DropRate { get; set; }

    public double DuplicateRate { get; set; }

    public long MinDelayMs { get; set; } = 1;

    public long MaxDelayMs { get; set; } = 5;

    public List<string> Violations { get; } = [];

    /// <summary>Values some node applied: committed, so a client would have had its acknowledgement.</summary>
    public HashSet<string> Acked { get; } = [];

    public int Proposed { get; private set; }

    public void At(long delayMs, Action action) => _events.Enqueue(action, (Now + delayMs, _seq++));

    public void RunFor(long ms) => RunUntil(() => false, ms);

    /// <summary>Runs events until <paramref name="done"/> holds (checked after each event) or the time is up.</summary>
    public bool RunUntil(Func<bool> done, long maxMs)
    {
        var end = Now + maxMs;
        while (_events.TryPeek(out var action, out var when) && when.Time <= end)
        {
            _events.Dequeue();
            Now = Math.Max(Now, when.Time);
            action();
            CheckCommitsAreDurable();
            if (done())
            {
                return true;
            }
        }
        Now = end;
        return done();
    }

    /// <summary>Ours beyond RAFT: whatever a node counts as committed is fsynced on a quorum at that moment.</summary>
    private void CheckCommitsAreDurable()
    {
        foreach (var node in Nodes)
        {
            if (node.Node is not { } n || n.CommitIndex <= node.CheckedCommit)
            {
                continue;
            }
            node.CheckedCommit = n.CommitIndex;
            if (n.CommitIndex < node.Store.FirstIndex)
            {
                continue;
            }
            var term = node.Store.TermAt(n.CommitIndex);
            var holders = Nodes.Count(other => other.Store.HoldsDurably(n.CommitIndex, term));
            if (holders < (Nodes.Length / 2) + 1)
            {
                Violations.Add($"{node.Id} counts {n.CommitIndex} committed but only {holders} nodes hold it on disk");
            }
        }
    }

    public SimNode? Leader()
    {
        SimNode? leader = null;
        ulong term = 0;
        foreach (var node in Nodes)
        {
            if (node.Node is { Role: RaftRole.Leader } n && n.Term >= term)
            {
                leader = node;
                term = n.Term;
            }
        }
        return leader;
    }

    /// <summary>Proposes a fresh value to the current leader (if any); returns it, or null.</summary>
    public string? Propose()
    {
        if (Leader() is not { } leader)
        {
            return null;
        }
        var value = "v" + _nextValue++;
        if (leader.Node!.Propose(Encoding.ASCII.GetBytes(value)) == 0)
        {
            return null;
        }
        Proposed++;
        leader.ScheduleFlush();
        return value;
    }

    public bool IsCut(int a, int b) => _cut.Contains((Math.Min(a, b), Math.Max(a, b)));

    public void Cut(int a, int b) => _cut.Add((Math.Min(a, b), Math.Max(a, b)));

    public void Isolate(int a)
    {
        for (var b = 0; b < Nodes.Length; b++)
        {
            if (b != a)
            {
                Cut(a, b);
            }
        }
    }

    public void Heal() => _cut.Clear();

    /// <summary>Every node up, one leader, every node has applied the leader's whole log.</summary>
    public bool Converged()
    {
        if (Leader() is not { } leader || Nodes.Any(n => n.Node is null))
        {
            return false;
        }
        var last = leader.Node!.LastIndex;
        return leader.Node.CommitIndex == last && Nodes.All(n => n.Node!.AppliedIndex == last && n.Node.LastIndex == last);
    }

    internal void Send(int from, int to, RaftMessageKind kind, byte[] payload)
    {
        if (IsCut(from, to) || Random.NextDouble() < DropRate)
        {
            return;
        }
        var copies = Random.NextDouble() < DuplicateRate ? 2 : 1;
        for (var i = 0; i < copies; i++)
        {
            var target = Nodes[to];
            var generation = target.Generation;
            At(MinDelayMs + Random.NextInt64(MaxDelayMs - MinDelayMs + 1), () => target.Deliver(generation, kind, payload));
        }
    }

    internal void OnApplied(string node, ulong index, string value)
    {
        if (_committed.TryGetValue(index, out var existing))
        {
            if (existing != value)
            {
                Violations.Add($"{node} applied {value} at {index}, another node applied {existing}");
            }
        }
        else
        {
            _committed[index] = value;
        }
        Acked.Add(value);
    }

    internal void OnLeader(string node, ulong term)
    {
        if (_leaders.TryGetValue(term, out var other) && other != node)
        {
            Violations.Add($"two leaders in term {term}: {other} and {node}");
        }
        _leaders[term] = node;
    }

    internal static string IdOf(int index) => "N" + index.ToString("D7", System.Globalization.CultureInfo.InvariantCulture);
}

/// <summary>One simulated server: its store survives crashes, its node and state machine do not.</summary>
internal sealed class SimNode : IRaftTransport, IRaftStateMachine
{
    private readonly RaftSimulation _sim;
    private readonly int _size;
    private bool _flushScheduled;

    public SimNode(RaftSimulation sim, int index, int size)
    {
        _sim = sim;
        _size = size;
        Index = index;
        Id = RaftSimulation.IdOf(index);
    }

    public int Index { get; }

    public string Id { get; }

    public MemoryRaftStore Store { get; } = new();

    public RaftNode? Node { get; private set; }

    public int Generation { get; private set; }

    /// <summary>The state machine: every applied value in order.</summary>
    public List<string> Applied { get; } = [];

    public ulong AppliedThrough { get; private set; }

    /// <summary>The commit index already checked for durability.</summary>
    public ulong CheckedCommit { get; set; }

    public void Start()
    {
        Applied.Clear();
        AppliedThrough = 0;
        CheckedCommit = 0;
        var peers = Enumerable.Range(0, _size).Select(RaftSimulation.IdOf);
        Node = new RaftNode(Id, peers, _size, _sim.Options, Store, this, this, new Random(_sim.Random.Next()), _sim.Now);
        var generation = Generation;
        Tick(generation);
    }

    /// <summary>kill -9 / power cut: unsynced log writes are lost, pending flushes and sends never happen.</summary>
    public void Crash()
    {
        Generation++;
        Node = null;
        _flushScheduled = false;
        Store.Crash();
    }

    public void Deliver(int generation, RaftMessageKind kind, byte[] payload)
    {
        if (generation != Generation || Node is null)
        {
            return;
        }
        Node.Receive(kind, payload, _sim.Now);
        ScheduleFlush();
    }

    public void ScheduleFlush()
    {
        if (_flushScheduled || Node is null)
        {
            return;
        }
        _flushScheduled = true;
        var generation = Generation;
        // An fsync takes a while; whatever arrives meanwhile joins the next one (group commit).
        _sim.At(1 + _sim.Random.NextInt64(4), () =>
        {
            if (generation == Generation && Node is not null)
            {
                _flushScheduled = false;
                Node.Flush(_sim.Now);
            }
        });
    }

    private void Tick(int generation)
    {
        _sim.At(10, () =>
        {
            if (generation != Generation || Node is null)
            {
                return;
            }
            Node.Tick(_sim.Now);
            ScheduleFlush();
            Tick(generation);
        });
    }

    void IRaftTransport.Broadcast(RaftMessageKind kind, byte[] payload)
    {
        for (var i = 0; i < _size; i++)
        {
            if (i != Index)
            {
                _sim.Send(Index, i, kind, payload);
            }
        }
    }

    void IRaftTransport.Send(string peer, RaftMessageKind kind, byte[] payload) =>
        _sim.Send(Index, int.Parse(peer.AsSpan(1), System.Globalization.CultureInfo.InvariantCulture), kind, payload);

    void IRaftStateMachine.Apply(ulong index, byte[] data)
    {
        var value = Encoding.ASCII.GetString(data);
        Applied.Add(value);
        AppliedThrough = index;
        _sim.OnApplied(Id, index, value);
    }

    byte[] IRaftStateMachine.CreateSnapshot() => Encoding.ASCII.GetBytes(string.Join('\n', Applied));

    void IRaftStateMachine.Restore(byte[] data)
    {
        Applied.Clear();
        if (data.Length > 0)
        {
            Applied.AddRange(Encoding.ASCII.GetString(data).Split('\n'));
        }
    }

    void IRaftStateMachine.LeaderChanged(string? leader, ulong term)
    {
        if (leader == Id)
        {
            _sim.OnLeader(Id, term);
        }
    }
}
