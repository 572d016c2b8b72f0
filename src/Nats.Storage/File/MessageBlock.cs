using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// One append-only block file with an optional in-memory buffer. The active block builds records in a
/// write buffer that holds only what is not yet written out, as Go's does while nobody reads the block:
/// once written, the bytes go and a read of them costs a pread from the page cache. A block that is
/// read a lot (<see cref="LoadCache"/>, a scan) holds its whole content instead, until the cache expiry
/// finds it unread for a period. Buffers come from <see cref="BlockBufferPool"/> and go back to it
/// (reads copy out of them).
/// </summary>
internal sealed class MessageBlock : IDisposable
{
    private byte[]? _buf;

    /// <summary>Block offset of <c>_buf[0]</c>: the buffer holds bytes [_bufStart, Length).</summary>
    private int _bufStart;

    public MessageBlock(int id, string path, IStoreFile file, int length)
    {
        Id = id;
        Path = path;
        File = file;
        Length = length;
        Flushed = length;
        _bufStart = length;
    }

    public int Id { get; }
    public string Path { get; }
    public IStoreFile File { get; private set; }

    /// <summary>Bytes in the block, including any not yet handed to the operating system.</summary>
    public int Length { get; set; }

    /// <summary>Bytes already written to the file.</summary>
    public int Flushed { get; set; }

    /// <summary>The block's whole content [0, Length), or null when only a tail (or nothing) is held.</summary>
    public byte[]? Cache => _bufStart == 0 ? _buf : null;

    /// <summary>Some buffer is held (whole content or the unwritten tail).</summary>
    public bool HoldsBuffer => _buf is not null;

    public int BufferLength => _buf?.Length ?? 0;

    /// <summary>The whole content is kept while records are appended (the block is being read).</summary>
    public bool KeepWhole { get; private set; }

    /// <summary>Changes whenever bytes already written change (erase, rewrite, disposal): read windows
    /// over the file of an older generation are stale.</summary>
    public int Generation { get; private set; }

    /// <summary>Read since the cache expiry last looked.</summary>
    public bool ReadSinceLook { get; set; }

    public bool Sealed { get; set; }

    /// <summary>Written since the last fsync.</summary>
    public bool NeedsSync { get; set; }

    public int LiveMsgs { get; set; }
    public long LiveBytes { get; set; }

    /// <summary>Accounted bytes of messages removed since the block was last written out whole.</summary>
    public long DeadBytes { get; set; }

    /// <summary>Lowest and highest message sequence ever written here (0 = none).</summary>
    public ulong MinSeq { get; set; }
    public ulong MaxSeq { get; set; }

    /// <summary>Offset of the last record written here (-1: none). A stream state file names it, so an
    /// open can tell that a block still holds the bytes the state was taken from.</summary>
    public int LastRecord { get; set; } = -1;

    /// <summary>The last four bytes as read for a state file, valid while length and generation are those of
    /// <see cref="TailChecksumAt"/> (a sealed block's are read once).</summary>
    public uint TailChecksum { get; set; }
    public (int Length, int Generation) TailChecksumAt { get; set; } = (-1, -1);

    public long LastUse { get; set; }

    /// <summary>Records read straight from the file since the block was last cached.</summary>
    public int ColdReads { get; set; }

    public bool HasPending => Flushed < Length;

    /// <summary>Read or written since the cache expiry last looked (see FileStore.CacheExpiry).</summary>
    public bool Used { get; set; }

    /// <summary>The least a write buffer is created with: a client's batch of small messages fits.</summary>
    private const int InitialBuffer = 128 * 1024;

    /// <summary>A write buffer grown past this by a burst goes back to the pool once written out.</summary>
    private const int MaxTailBuffer = 1 << 20;

    public void NoteMessage(ulong seq, int recordLength)
    {
        if (MinSeq == 0 || seq < MinSeq)
        {
            MinSeq = seq;
        }

        if (seq > MaxSeq)
        {
            MaxSeq = seq;
        }

        LiveMsgs++;
        LiveBytes += recordLength;
    }

    /// <summary>Room for <paramref name="extra"/> more bytes at the end of an active block.</summary>
    public Span<byte> Reserve(int extra)
    {
        Used = true;
        if (_buf is null)
        {
            // Dropped only once everything was written out, so nothing before Length is needed here.
            _buf = BlockBufferPool.Rent(Math.Max(extra, InitialBuffer));
            _bufStart = Length;
        }
        var held = Length - _bufStart;
        var need = held + extra;
        if (_buf.Length < need)
        {
            var grown = BlockBufferPool.Rent(Math.Max(need, _buf.Length * 2));
            _buf.AsSpan(0, held).CopyTo(grown);
            BlockBufferPool.Return(_buf);
            _buf = grown;
        }
        return _buf.AsSpan(held, extra);
    }

    /// <summary>Where the record at <paramref name="offset"/> is in the held buffer, if it is there.</summary>
    public bool TryBuffered(int offset, out byte[] buffer, out int at)
    {
        if (_buf is { } b && offset >= _bufStart)
        {
            (buffer, at) = (b, offset - _bufStart);
            return true;
        }
        (buffer, at) = (null!, 0);
        return false;
    }

    /// <summary>Gives the buffer back to the pool; the next read reloads from the file.</summary>
    public void DropCache()
    {
        ColdReads = 0;
        KeepWhole = false;
        if (_buf is { } c)
        {
            _buf = null;
            _bufStart = Length;
            BlockBufferPool.Return(c);
        }
    }

    /// <summary>Nobody read the block for a period: back to holding only the unwritten tail.</summary>
    public void ReleaseReadInterest()
    {
        KeepWhole = false;
        if (_buf is not { } whole || _bufStart > 0)
        {
            return;
        }

        var pending = Length - Flushed;
        if (pending == 0)
        {
            DropCache();
            return;
        }
        var tail = BlockBufferPool.Rent(Math.Max(pending, InitialBuffer));
        whole.AsSpan(Flushed, pending).CopyTo(tail);
        BlockBufferPool.Return(whole);
        _buf = tail;
        _bufStart = Flushed;
    }

    /// <summary>Hands the unwritten tail to the operating system (page cache; no fsync).</summary>
    public void WritePending()
    {
        if (Flushed >= Length)
        {
            return;
        }

        File.Write(_buf.AsSpan(Flushed - _bufStart, Length - Flushed), Flushed);
        Flushed = Length;
        NeedsSync = true;
        if (KeepWhole)
        {
            return;
        }
        // Go's write buffer: written bytes are not kept for readers nobody has seen.
        _bufStart = Length;
        if (_buf!.Length > MaxTailBuffer)
        {
            BlockBufferPool.Return(_buf);
            _buf = null;
        }
    }

    /// <summary>The whole content, loaded (and kept while the block is read) if not held.</summary>
    public byte[] LoadCache()
    {
        KeepWhole = true;
        if (_buf is { } c && _bufStart == 0)
        {
            return c;
        }

        var buf = BlockBufferPool.Rent(Math.Max(Length, 1));
        var read = ReadFile(buf, _buf is null ? Length : _bufStart);
        if (_buf is { } tail)
        {
            if (read == _bufStart)
            {
                tail.AsSpan(0, Length - _bufStart).CopyTo(buf.AsSpan(_bufStart));
                read = Length;
            }
            BlockBufferPool.Return(tail);
        }
        // The file is shorter than recorded (truncated underneath us): zeros fail every checksum.
        buf.AsSpan(read, Length - read).Clear();
        _buf = buf;
        _bufStart = 0;
        return buf;
    }

    /// <summary>Copies the whole content into <paramref name="dest"/> without keeping it; returns the bytes
    /// copied (fewer when the file was cut short underneath us).</summary>
    public int CopyContent(byte[] dest)
    {
        if (_buf is null)
        {
            return ReadFile(dest, Length);
        }

        var read = ReadFile(dest, _bufStart);
        if (read < _bufStart)
        {
            return read;
        }

        _buf.AsSpan(0, Length - _bufStart).CopyTo(dest.AsSpan(_bufStart));
        return Length;
    }

    private int ReadFile(byte[] dest, int length)
    {
        var read = 0;
        while (read < length)
        {
            var n = File.Read(dest.AsSpan(read, length - read), read);
            if (n <= 0)
            {
                break;
            }

            read += n;
        }
        return read;
    }

    /// <summary>Overwrites bytes already in the file (secure erase) in both cache and file.</summary>
    public void Overwrite(int offset, ReadOnlySpan<byte> bytes)
    {
        Generation++;
        if (TryBuffered(offset, out var c, out var at))
        {
            bytes.CopyTo(c.AsSpan(at));
        }

        if (offset < Flushed)
        {
            File.Write(bytes[..Math.Min(bytes.Length, Flushed - offset)], offset);
        }

        NeedsSync = true;
    }

    public void Sync()
    {
        if (!NeedsSync)
        {
            return;
        }

        // Cleared only once the fsync succeeded: a failed one leaves the block owing a sync (and the
        // store fails), instead of letting the next round skip it and release acknowledgements.
        File.Sync();
        NeedsSync = false;
    }

    /// <summary>Switches to a rewritten file whose whole content is <paramref name="content"/>.</summary>
    public void Reopen(IStoreFile file, byte[] content, int length)
    {
        Generation++;
        File.Dispose();
        DropCache();
        File = file;
        _buf = content;
        _bufStart = 0;
        KeepWhole = true;
        Length = length;
        Flushed = length;
        NeedsSync = false;
    }

    public static byte[] Rent(int size) => BlockBufferPool.Rent(Math.Max(size, 1));

    public static void ReturnRented(byte[] buffer) => BlockBufferPool.Return(buffer);

    public void Dispose()
    {
        Generation++;
        File.Dispose();
        DropCache();
    }
}
