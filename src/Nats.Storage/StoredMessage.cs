namespace Nats.Storage;

/// <summary>
/// A loaded message. Callers pass the same instance back into load calls so steady-state reads do not
/// allocate: the file store copies the record into <see cref="Buffer"/>, which only grows. Header and
/// Data stay valid until the instance is passed to another load.
/// </summary>
internal sealed class StoredMessage
{
    internal byte[] Buffer = [];

    public string Subject { get; internal set; } = "";
    public ReadOnlyMemory<byte> Header { get; internal set; }
    public ReadOnlyMemory<byte> Data { get; internal set; }
    public ulong Sequence { get; internal set; }

    /// <summary>Unix time in nanoseconds, as the Go server stores it.</summary>
    public long Timestamp { get; internal set; }

    public DateTime Time => DateTime.UnixEpoch.AddTicks(Timestamp / 100);

    internal Span<byte> Rent(int size)
    {
        if (Buffer.Length < size)
        {
            Buffer = new byte[Math.Max(size, Math.Min(Buffer.Length * 2, 1 << 20))];
        }

        return Buffer.AsSpan(0, size);
    }

    internal void Clear()
    {
        Subject = "";
        Header = default;
        Data = default;
        Sequence = 0;
        Timestamp = 0;
    }
}
