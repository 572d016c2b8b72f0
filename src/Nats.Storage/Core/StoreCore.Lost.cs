namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private const int MaxLostSeqs = 10_000;

    private readonly List<ulong> _lostSeqs = [];
    private ulong _lostCount;
    private ulong _lostBytes;

    /// <summary>Receives a line for every damaged record; the server routes it to its logger.</summary>
    protected Action<string>? Warn { get; init; }

    /// <summary>Counts a record that could not be served; sequence 0 means its sequence was unreadable.</summary>
    protected void RecordLost(ulong seq, ulong bytes, string message)
    {
        _lostCount++;
        _lostBytes += bytes;
        if (seq != 0 && _lostSeqs.Count < MaxLostSeqs)
            _lostSeqs.Add(seq);
        Warn?.Invoke(message);
    }

    protected bool IsKnownLost(ulong seq) => _lostSeqs.Contains(seq);

    private LostStreamData? LostSnapshot() => _lostCount == 0
        ? null
        : new LostStreamData { Sequences = [.. _lostSeqs], Count = _lostCount, Bytes = _lostBytes };
}
