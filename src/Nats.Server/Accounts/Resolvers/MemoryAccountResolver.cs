using System.Collections.Concurrent;

namespace Nats.Server.Accounts.Resolvers;

/// <summary>Go's MemAccResolver (<c>resolver: MEMORY</c>): the preloaded JWTs, kept in memory.</summary>
internal sealed class MemoryAccountResolver : IAccountResolver
{
    private readonly ConcurrentDictionary<string, string> _jwts = new(StringComparer.Ordinal);

    public bool TracksUpdates => false;

    public bool AllowDelete => false;

    public string? Fetch(string accountKey) => _jwts.GetValueOrDefault(accountKey);

    public void Store(string accountKey, string jwt) => _jwts[accountKey] = jwt;

    public IReadOnlyList<string> List() => [.. _jwts.Keys.Order(StringComparer.Ordinal)];

    public bool Delete(string accountKey) => _jwts.TryRemove(accountKey, out _);

    /// <summary>A reload replaces the whole set of preloads.</summary>
    public void Clear() => _jwts.Clear();
}
