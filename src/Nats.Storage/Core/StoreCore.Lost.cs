namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private const int MaxLostSeqs = 10_000;

    private readonly List<ulong> _lostSeqs = [];

    // Every run of sequences reported lost (few: a run is one damaged region or one missing tail), so
    // asking whether a sequence is already known costs a walk over runs, not over sequences.
    private readonly List<(ulong First, ulong Last)> _lostRuns = [];
    private ulong _lostCount;
    private ulong _lostBytes;

    /// <summary>Receives a line for every damaged record; the server routes it to its logger.</summary>
    protected Action<string>? Warn { get; init; }

    /// <summary>Receives every damaged record as it is found (for a JetStream advisory).</summary>
    protected Action<StoreDamage>? Damaged { get; init; }

    /// <summary>Counts a record that could not be served; sequence 0 means its sequence was unreadable.
    /// <paramref name="block"/> is the file engine's block id (0: not known or not applicable).</summary>
    protected void RecordLost(ulong seq, ulong bytes, string message, int block = 0)
        => RecordLostRange(seq, seq, bytes, message, block);

    /// <summary>Counts the messages <paramref name="first"/>..<paramref name="last"/> as lost with one
    /// warning and one damage event: a lost tail of a million messages is one line, not a million.</summary>
    protected void RecordLostRange(ulong first, ulong last, ulong bytes, string message, int block = 0)
    {
        _lostBytes += bytes;
        if (first == 0)
        {
            _lostCount++;
        }
        else
        {
            _lostCount += last - first + 1;
            _lostRuns.Add((first, last));
            for (var s = first; s <= last && _lostSeqs.Count < MaxLostSeqs; s++)
            {
                _lostSeqs.Add(s);
            }
        }

        Warn?.Invoke(message);
        Damaged?.Invoke(new StoreDamage(block, first, last, bytes, message));
    }

    protected bool IsKnownLost(ulong seq) => KnownLostUpTo(seq) != 0;

    /// <summary>The last sequence of the reported run holding <paramref name="seq"/>; 0 when none does.</summary>
    protected ulong KnownLostUpTo(ulong seq)
    {
        foreach (var (first, last) in _lostRuns)
        {
            if (seq >= first && seq <= last)
            {
                return last;
            }
        }
        return 0;
    }

    private LostStreamData? LostSnapshot() => _lostCount == 0
        ? null
        : new LostStreamData { Sequences = [.. _lostSeqs], Count = _lostCount, Bytes = _lostBytes };
}
