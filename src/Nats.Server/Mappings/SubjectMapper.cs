using System.Text;
using Nats.Subjects;

namespace Nats.Server.Mappings;

/// <summary>
/// An account's subject mappings, compiled (Go 2.9.10's Account.mappings with AddWeightedMappings and
/// selectMappedSubject). Immutable once built, so publishers read it without locks; the account swaps
/// in a new instance to change its mappings.
/// </summary>
internal sealed class SubjectMapper
{
    // Go tokenises into a 32-slot array on the stack; longer subjects are rare enough to allocate.
    private const int StackTokens = 32;

    private readonly Entry[] _entries;
    private readonly Random? _random;

    private SubjectMapper(Entry[] entries, Random? random)
    {
        _entries = entries;
        _random = random;
    }

    /// <summary>
    /// Compiles <paramref name="mappings"/>; a later entry with the same source replaces an earlier one
    /// (keeping its position), as Go's AddWeightedMappings does. Returns null when there are none, so the
    /// publish path can test for mappings with one null check. Throws <see cref="MappingException"/>.
    /// </summary>
    public static SubjectMapper? Create(IEnumerable<SubjectMapping>? mappings, Random? random = null)
    {
        var entries = new List<Entry>();
        foreach (var mapping in mappings ?? [])
        {
            var entry = Compile(mapping);
            var existing = entries.FindIndex(e => e.Source == entry.Source);
            if (existing >= 0)
            {
                entries[existing] = entry;
            }
            else
            {
                entries.Add(entry);
            }
        }
        return entries.Count == 0 ? null : new SubjectMapper(entries.ToArray(), random);
    }

    /// <summary>Go's AddWeightedMappings validation and weight processing for one source.</summary>
    public static Entry Compile(SubjectMapping mapping)
    {
        var source = mapping.Source;
        if (!SubjectRules.IsValid(source))
        {
            throw new MappingException(MappingErrors.BadSubject);
        }
        var isWildcard = !SubjectRules.IsLiteral(source);
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var plain = new List<(SubjectTransform Transform, int Weight)>();
        var byCluster = new Dictionary<string, List<(SubjectTransform Transform, int Weight)>>(StringComparer.Ordinal);
        var total = 0;
        foreach (var destination in mapping.Destinations)
        {
            if (!seen.Add(destination.Subject))
            {
                throw new MappingException($"duplicate entry for {Auth.GoQuote.Quote(Encoding.UTF8.GetBytes(destination.Subject))}");
            }
            // Go keeps weights in a uint8.
            var weight = destination.Weight & 0xFF;
            if (weight > 100)
            {
                throw new MappingException("individual weights need to be <= 100");
            }
            total += weight;
            if (total > 100)
            {
                throw new MappingException("total weight needs to be <= 100");
            }
            DestinationToken.Validate(destination.Subject);
            var transform = SubjectTransform.Create(source, destination.Subject);
            if (destination.Cluster.Length == 0)
            {
                plain.Add((transform, weight));
            }
            else
            {
                if (!byCluster.TryGetValue(destination.Cluster, out var list))
                {
                    byCluster[destination.Cluster] = list = [];
                }
                list.Add((transform, weight));
            }
        }
        var sourceWasListed = seen.Contains(source);
        return new Entry(
            source,
            Encoding.UTF8.GetBytes(source),
            isWildcard,
            Cumulative(source, isWildcard, plain, sourceWasListed),
            byCluster.ToDictionary(kv => kv.Key, kv => Cumulative(source, isWildcard, kv.Value, sourceWasListed), StringComparer.Ordinal));
    }

    /// <summary>
    /// Weights below 100 send the rest to the original subject, unless the source itself was listed (then
    /// the rest is dropped). Destinations are sorted by weight and the weights made cumulative.
    /// </summary>
    private static Destination[] Cumulative(string source, bool isWildcard, List<(SubjectTransform Transform, int Weight)> list, bool sourceWasListed)
    {
        var sum = list.Sum(d => d.Weight);
        if (sum != 100 && !sourceWasListed)
        {
            var self = isWildcard ? SubjectTransform.TransformTokenize(SubjectTokens.Split(source)) : source;
            list.Add((SubjectTransform.Create(source, self), list.Count == 0 ? 100 : 100 - sum));
        }
        var sorted = list.OrderBy(d => d.Weight).ToList();
        var result = new Destination[sorted.Count];
        var running = 0;
        for (var i = 0; i < sorted.Count; i++)
        {
            running += sorted[i].Weight;
            result[i] = new Destination(sorted[i].Transform, running);
        }
        return result;
    }

    /// <summary>The mappings as /accountz shows them: source to destinations with cumulative weights.</summary>
    public IReadOnlyList<Entry> Entries => _entries;

    /// <summary>
    /// Go's selectMappedSubject. When a mapping's source matches, writes the chosen destination into
    /// <paramref name="buffer"/> and returns true; <paramref name="length"/> is 0 when the weights left the
    /// message unassigned (Go then routes it to the empty subject, i.e. nowhere).
    /// </summary>
    public bool TryMap(ReadOnlySpan<byte> subject, ref byte[] buffer, out int length)
    {
        // Literal sources are compared as bytes; tokenising is left to the first source that needs it,
        // so accounts with only literal mappings never pay for it.
        var entries = _entries;
        for (var i = 0; i < entries.Length; i++)
        {
            var entry = entries[i];
            if (entry.NeedsTokenMatch)
            {
                return TryMapTokenized(subject, i, ref buffer, out length);
            }
            if (subject.SequenceEqual(entry.SourceBytes))
            {
                length = Apply(entry, subject, default, ref buffer);
                return true;
            }
        }
        length = 0;
        return false;
    }

    /// <summary>Continues the first-match scan from <paramref name="from"/> with the subject tokenised.</summary>
    private bool TryMapTokenized(ReadOnlySpan<byte> subject, int from, ref byte[] buffer, out int length)
    {
        Span<Range> stackTokens = stackalloc Range[StackTokens];
        var count = SubjectTokens.Tokenize(subject, stackTokens);
        ReadOnlySpan<Range> tokens = count >= 0 ? stackTokens[..count] : SubjectTokens.Tokenize(subject);
        var entries = _entries;
        for (var i = from; i < entries.Length; i++)
        {
            var entry = entries[i];
            var matched = entry.NeedsTokenMatch
                ? (!entry.IsWildcard && subject.SequenceEqual(entry.SourceBytes)) || SubjectRules.IsSubsetMatch(subject, entry.SourceBytes)
                : subject.SequenceEqual(entry.SourceBytes);
            if (matched)
            {
                length = Apply(entry, subject, tokens, ref buffer);
                return true;
            }
        }
        length = 0;
        return false;
    }

    /// <summary>Picks a destination by weight and writes it; 0 when the weights left the message unassigned.</summary>
    private int Apply(Entry match, ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens, ref byte[] buffer)
    {
        // Cluster-scoped destinations apply only on a server in that cluster; this server has no cluster.
        var destinations = match.Destinations;
        if (destinations.Length == 1 && destinations[0].CumulativeWeight == 100)
        {
            return destinations[0].Transform.Apply(subject, tokens, ref buffer);
        }
        var roll = _random is null ? Random.Shared.Next(100) : _random.Next(100);
        foreach (var destination in destinations)
        {
            if (roll < destination.CumulativeWeight)
            {
                return destination.Transform.Apply(subject, tokens, ref buffer);
            }
        }
        return 0;
    }

    /// <summary>One compiled mapping.</summary>
    internal sealed record Entry(string Source, byte[] SourceBytes, bool IsWildcard,
        Destination[] Destinations, Dictionary<string, Destination[]> ClusterDestinations)
    {
        /// <summary>
        /// Wildcard sources need token matching. So do literal ones with a token starting with '*' ("a.*b"):
        /// Go's subset match treats any token starting with '*' as a wildcard. Otherwise equality decides.
        /// </summary>
        public bool NeedsTokenMatch { get; } = IsWildcard || SubjectTokens.Split(Source).Any(t => t.StartsWith('*'));
    }

    internal sealed record Destination(SubjectTransform Transform, int CumulativeWeight);
}
