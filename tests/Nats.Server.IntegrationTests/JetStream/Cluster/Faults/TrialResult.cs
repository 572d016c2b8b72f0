using System.Text.Json;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// The figures of one fault trial, compared over every replica's own store: acknowledged messages missing
/// (on the worst replica, and on every replica), stored at another sequence than acknowledged, stored twice,
/// replicas whose contents differ from the majority's, and the longest time without a successful publish
/// from the fault on.
/// </summary>
internal sealed record TrialResult
{
    public required string Kind { get; init; }

    public required string Fault { get; init; }

    public int Trial { get; init; }

    public int Acked { get; init; }

    /// <summary>Acknowledged messages missing from the replica that misses the most.</summary>
    public int LostWorst { get; init; }

    /// <summary>Acknowledged messages missing from every replica.</summary>
    public int LostAll { get; init; }

    /// <summary>Acknowledged messages held at another sequence than their PubAck named (any replica).</summary>
    public int WrongSeq { get; init; }

    /// <summary>Payloads stored more than once on one replica (the worst).</summary>
    public int Duplicated { get; init; }

    /// <summary>Replicas whose messages differ from the majority's.</summary>
    public int Diverged { get; init; }

    /// <summary>Whether the running servers' replicas agreed (message and byte counts) within the wait after the heal.</summary>
    public bool Converged { get; init; }

    /// <summary>Acknowledged messages the durable consumer never delivered.</summary>
    public int ConsumerMissed { get; init; }

    public double MaxGapSeconds { get; init; }

    public int PublishErrors { get; init; }

    /// <summary>Per replica: server name, last sequence, message count.</summary>
    public string Replicas { get; init; } = "";

    public string Note { get; init; } = "";

    public bool Clean => Acked > 0 && LostWorst == 0 && WrongSeq == 0 && Duplicated == 0 && Diverged == 0 && ConsumerMissed == 0;

    public override string ToString() => FormattableString.Invariant(
        $"{Kind} {Fault} #{Trial}: acked {Acked}, lost {LostWorst} (on every replica {LostAll}), wrong seq {WrongSeq}, duplicated {Duplicated}, diverged replicas {Diverged}, converged {Converged}, missed by the consumer {ConsumerMissed}, max publish gap {MaxGapSeconds:F2} s, publish errors {PublishErrors}; replicas {Replicas}{(Note.Length > 0 ? "; " + Note : "")}");

    /// <summary>Appends the result as a JSON line to the file named by NATS_FAULT_RESULTS, when set (scripts/jepsen.sh).</summary>
    public void Save()
    {
        if (Environment.GetEnvironmentVariable("NATS_FAULT_RESULTS") is { Length: > 0 } path)
        {
            lock (typeof(TrialResult))
            {
                File.AppendAllText(path, JsonSerializer.Serialize(this) + "\n");
            }
        }
    }

    /// <summary>Compares every replica with the acknowledgements.</summary>
    public static TrialResult Compare(string kind, string fault, int trial, IReadOnlyDictionary<string, ulong> acked, IReadOnlyList<ReplicaContents> replicas)
    {
        var lostWorst = 0;
        var missingEverywhere = acked.Keys.ToHashSet();
        var wrongSeq = new HashSet<string>();
        var duplicated = 0;
        foreach (var replica in replicas)
        {
            var held = new Dictionary<string, ulong>();
            var twice = 0;
            foreach (var (seq, payload) in replica.Messages)
            {
                if (!held.TryAdd(payload, seq))
                {
                    twice++;
                }
            }
            duplicated = Math.Max(duplicated, twice);
            var lost = 0;
            foreach (var (payload, seq) in acked)
            {
                if (!held.TryGetValue(payload, out var at))
                {
                    lost++;
                    continue;
                }
                missingEverywhere.Remove(payload);
                if (at != seq)
                {
                    wrongSeq.Add(payload);
                }
            }
            lostWorst = Math.Max(lostWorst, lost);
        }
        // Replicas grouped by their exact contents; the largest group is the majority.
        var groups = replicas.GroupBy(r => string.Join("\n", r.Messages.Select(m => $"{m.Key}:{m.Value}"))).Select(g => g.Count()).OrderDescending().ToList();
        return new TrialResult
        {
            Kind = kind,
            Fault = fault,
            Trial = trial,
            Acked = acked.Count,
            LostWorst = lostWorst,
            LostAll = missingEverywhere.Count,
            WrongSeq = wrongSeq.Count,
            Duplicated = duplicated,
            Diverged = replicas.Count - groups[0],
            Replicas = string.Join(", ", replicas.Select(r => $"{r.Server}: last {r.LastSeq}, {r.Messages.Count} msgs")),
        };
    }
}
