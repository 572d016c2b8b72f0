namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private const int MaxLostSeqs = 10_000;

    private readonly List<ulong> _lostSeqs = [];
    private ulong _lostCount;
    private ulong _lostBytes;

    /// <summary>Receives a line for every damaged record; the server routes it to its logger.</summary>
    protected Action<string>? Warn { get; init; }

    /// <summary>Receives every damaged record as it is found (for a JetStream advisory).</summary>
    protected Action<StoreDamage>? Damaged { get; init; }

    /// <summary>Counts a record that could not be served; sequence 0 means its sequence was unreadable.
    /// <paramref name="block"/> is the file engine's block id (0: not known or not applicable).</summary>
    protected void RecordLost(ulong seq, ulong bytes, string message, int block = 0)
    {
        _lostCount++;
        _lostBytes += bytes;
        if (seq != 0 && _lostSeqs.Count < MaxLostSeqs)
        {
            _lostSeqs.Add(seq);
        }

        Warn?.Invoke(message);
        Damaged?.Invoke(new StoreDamage(block, seq, seq, bytes, message));
    }

    protected bool IsKnownLost(ulong seq) => _lostSeqs.Contains(seq);

    private LostStreamData? LostSnapshot() => _lostCount == 0
        ? null
        : new LostStreamData { Sequences = [.. _lostSeqs], Count = _lostCount, Bytes = _lostBytes };
}
