namespace Nats.Server.Clients;

/// <summary>
/// Bytes waiting to be written to one client. Producers (any publisher's read loop) append under
/// the owning client's lock; the write loop takes everything queued in one swap and writes it in as
/// few syscalls as the chunks allow. Chunks come from <see cref="OutboundChunkPool"/> and go back after the write.
/// </summary>
internal sealed class OutboundBuffer
{
    private const int MinChunkSize = OutboundChunkPool.MinChunkSize;
    private const int MaxChunkSize = OutboundChunkPool.MaxChunkSize;

    private List<ArraySegment<byte>> _sealed = [];
    private byte[]? _current;
    private int _currentLength;
    private int _nextChunkSize = MinChunkSize;

    /// <summary>Bytes queued and not yet taken by the write loop.</summary>
    public long PendingBytes { get; private set; }

    public bool IsEmpty => PendingBytes == 0;

    /// <summary>Chunks queued (sealed ones and the one being filled), for Go's slow-consumer log line.</summary>
    public int ChunkCount => _sealed.Count + (_currentLength > 0 ? 1 : 0);

    /// <summary>Memory the queued chunks hold (their whole length, not just the bytes written).</summary>
    public long HeldBytes { get; private set; }

    /// <summary>Returns writable space of at least <paramref name="size"/> contiguous bytes; call <see cref="Advance"/> after.</summary>
    public Span<byte> GetSpan(int size)
    {
        if (_current is null || _current.Length - _currentLength < size)
        {
            if (_current is not null)
            {
                // A chunk filled up within one batch: busy clients get bigger chunks, so a burst
                // is written in fewer, larger sends.
                _nextChunkSize = Math.Min(MaxChunkSize, _nextChunkSize * 2);
            }
            SealCurrent();
            var chunkSize = Math.Max(size, _nextChunkSize);
            _current = OutboundChunkPool.Shared.Rent(chunkSize);
            _currentLength = 0;
            HeldBytes += _current.Length;
        }
        return _current.AsSpan(_currentLength);
    }

    public void Advance(int count)
    {
        _currentLength += count;
        PendingBytes += count;
    }

    public void Write(ReadOnlySpan<byte> data)
    {
        data.CopyTo(GetSpan(data.Length));
        Advance(data.Length);
    }

    /// <summary>Appends everything queued to <paramref name="into"/> and resets; <paramref name="held"/> is the memory the chunks moved hold.</summary>
    public long TakeAll(List<ArraySegment<byte>> into, out long held)
    {
        SealCurrent();
        into.AddRange(_sealed);
        _sealed.Clear();
        var bytes = PendingBytes;
        PendingBytes = 0;
        held = HeldBytes;
        HeldBytes = 0;
        return bytes;
    }

    /// <summary>Drops everything queued (a slow consumer is cut without flushing).</summary>
    public void Clear()
    {
        SealCurrent();
        Release(_sealed);
        PendingBytes = 0;
        HeldBytes = 0;
        _nextChunkSize = MinChunkSize;
    }

    public static void Release(List<ArraySegment<byte>> segments)
    {
        foreach (var segment in segments)
        {
            // Null where the writer already gave the chunk back as soon as it was written.
            if (segment.Array is not null)
            {
                OutboundChunkPool.Shared.Return(segment.Array);
            }
        }
        segments.Clear();
    }

    /// <summary>After a quiet spell the next burst starts small again, so idle clients hold little memory.</summary>
    public void ResetChunkSizeIfIdle(Lock sync)
    {
        lock (sync)
        {
            if (PendingBytes == 0)
            {
                _nextChunkSize = MinChunkSize;
            }
        }
    }

    private void SealCurrent()
    {
        if (_current is null)
        {
            return;
        }
        if (_currentLength > 0)
        {
            _sealed.Add(new ArraySegment<byte>(_current, 0, _currentLength));
        }
        else
        {
            HeldBytes -= _current.Length;
            OutboundChunkPool.Shared.Return(_current);
        }
        _current = null;
        _currentLength = 0;
    }
}
