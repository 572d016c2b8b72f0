namespace Nats.Server.Subscriptions;

/// <summary>
/// Compares byte[] keys by content and lets dictionaries be probed with a span, so a subject read
/// straight out of the receive buffer finds its entry without first becoming a string or array.
/// </summary>
internal sealed class ByteKeyComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    public static readonly ByteKeyComparer Instance = new();

    public bool Equals(byte[]? x, byte[]? y) =>
        ReferenceEquals(x, y) || (x is not null && y is not null && x.AsSpan().SequenceEqual(y));

    public int GetHashCode(byte[] obj) => Hash(obj);

    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => alternate.SequenceEqual(other);

    public int GetHashCode(ReadOnlySpan<byte> alternate) => Hash(alternate);

    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();

    public static int Hash(ReadOnlySpan<byte> bytes)
    {
        var hash = new HashCode();
        hash.AddBytes(bytes);
        return hash.ToHashCode();
    }
}
