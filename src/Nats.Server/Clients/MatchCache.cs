using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// One publisher's cache of match results per subject (Go's c.in.results): no lock on a hit, and
/// dropped whenever the account's subscription index changes (its generation moves) or the cache
/// is full. Subjects enter on their second publish (see <see cref="AdmissionFilter"/>). Used by one thread only.
/// </summary>
internal sealed class MatchCache
{
    private const int MaxCachedResults = 512;

    private readonly Dictionary<byte[], SubListResult> _results = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], SubListResult>.AlternateLookup<ReadOnlySpan<byte>> _lookup;
    private readonly AdmissionFilter _admission = new();
    private long _generation = -1;

    public MatchCache() => _lookup = _results.GetAlternateLookup<ReadOnlySpan<byte>>();

    public int Count => _results.Count;

    /// <summary>The subscribers of <paramref name="subject"/> in <paramref name="subList"/>, from the cache when still valid.</summary>
    public SubListResult Lookup(SubList subList, ReadOnlySpan<byte> subject)
    {
        var generation = subList.GenerationId;
        if (generation != _generation)
        {
            _results.Clear();
            _generation = generation;
        }
        else if (_lookup.TryGetValue(subject, out var cached))
        {
            return cached;
        }
        var result = subList.Match(subject);
        // A subject seen once (a request's reply inbox) is not worth a key copy; it is cached when seen again.
        if (!_admission.Admit(ByteKeyComparer.Hash(subject)))
        {
            return result;
        }
        if (_results.Count >= MaxCachedResults)
        {
            _results.Clear();
        }
        _lookup[subject] = result;
        return result;
    }

    /// <summary>Forgets everything (the client moved to another account's index).</summary>
    public void Clear()
    {
        _generation = -1;
        _results.Clear();
    }
}
