using System.Text;

namespace Nats.Server.Gateways;

/// <summary>
/// One account's routed replies (Go's gwReplyMapping): a request that crossed a gateway reaches its responder with
/// the bare reply; when the responder publishes on it, the message goes back as <c>_GR_.&lt;cluster&gt;.&lt;server&gt;.reply</c>
/// straight to the gateway it came from. Entries live 2 s (Go's recent-subscription expiration).
/// </summary>
internal sealed class GatewayReplyMap
{
    private static readonly long Ttl = (long)TimeSpan.FromSeconds(2).TotalMilliseconds;

    private readonly Lock _sync = new();
    private readonly Dictionary<string, (byte[] Routed, long Expires)> _map = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (byte[] Routed, long Expires)>.AlternateLookup<ReadOnlySpan<char>> _lookup;
    private int _count;
    private long _nextPurge;

    public GatewayReplyMap() => _lookup = _map.GetAlternateLookup<ReadOnlySpan<char>>();

    /// <summary>Whether any mapping is live: the publish path checks this before anything else.</summary>
    public bool IsEmpty => Volatile.Read(ref _count) == 0;

    public void Track(ReadOnlySpan<byte> bare, ReadOnlySpan<byte> routed)
    {
        var now = Environment.TickCount64;
        lock (_sync)
        {
            Purge(now);
            _map[Encoding.UTF8.GetString(bare)] = (routed.ToArray(), now + Ttl);
            Volatile.Write(ref _count, _map.Count);
        }
    }

    /// <summary>The routed form of <paramref name="subject"/> when a live mapping has it.</summary>
    public byte[]? Find(ReadOnlySpan<byte> subject)
    {
        Span<char> chars = stackalloc char[Math.Min(subject.Length, 512)];
        if (subject.Length > chars.Length)
        {
            return null;
        }
        var n = Encoding.UTF8.GetChars(subject, chars);
        lock (_sync)
        {
            Purge(Environment.TickCount64);
            return _lookup.TryGetValue(chars[..n], out var entry) && entry.Expires > Environment.TickCount64 ? entry.Routed : null;
        }
    }

    private void Purge(long now)
    {
        // A sweep at most every quarter TTL: a lookup checks its own entry's expiry.
        if (_map.Count == 0 || now < _nextPurge)
        {
            return;
        }
        _nextPurge = now + Ttl / 4;
        foreach (var (key, entry) in _map)
        {
            if (entry.Expires <= now)
            {
                _map.Remove(key);
            }
        }
        Volatile.Write(ref _count, _map.Count);
    }
}
