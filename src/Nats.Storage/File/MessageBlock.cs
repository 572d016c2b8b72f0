using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// One append-only block file. While a block is active its whole content is also in <see cref="Cache"/>,
/// which is where records are built; the unwritten tail [Flushed, Length) goes to the file in one write.
/// A sealed block's cache is loaded on demand and may be dropped. Cache arrays come from a pool and go
/// back to it (reads copy out of them), so rotating 8 MB blocks does not churn the large object heap.
/// </summary>
internal sealed class MessageBlock : IDisposable
{
    private static readonly System.Buffers.ArrayPool<byte> Pool = System.Buffers.ArrayPool<byte>.Create(256 << 20, 16);

    public MessageBlock(int id, string path, IStoreFile file, int length)
    {
        Id = id;
        Path = path;
        File = file;
        Length = length;
        Flushed = length;
    }

    public int Id { get; }
    public string Path { get; }
    public IStoreFile File { get; private set; }

    /// <summary>Bytes in the block, including any not yet handed to the operating system.</summary>
    public int Length { get; set; }

    /// <summary>Bytes already written to the file.</summary>
    public int Flushed { get; set; }

    public byte[]? Cache { get; set; }

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

    public long LastUse { get; set; }

    /// <summary>Records read straight from the file since the block was last cached.</summary>
    public int ColdReads { get; set; }

    public bool HasPending => Flushed < Length;

    /// <summary>Read or written since the cache expiry last looked (see FileStore.CacheExpiry).</summary>
    public bool Used { get; set; }

    /// <summary>The least an emptied active block's buffer is re-created with. Above the large object
    /// threshold on purpose: a large array's pages come from the OS untouched and cost resident memory
    /// only where records are written, while a small one is zeroed (touched) whole by the GC.</summary>
    private const int InitialBuffer = 128 * 1024;

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

    /// <summary>Sizes the cache of a new active block for a whole block up front.</summary>
    public void PrepareForWrites(int blockSize) => Cache ??= Pool.Rent(blockSize);

    /// <summary>Room for <paramref name="extra"/> more bytes in the cache of an active block.</summary>
    public Span<byte> Reserve(int extra)
    {
        var need = Length + extra;
        Used = true;
        // An idle active block's buffer may have been dropped: its written bytes come back first.
        var cache = Cache ?? (Length > 0 ? LoadCache() : Cache = Pool.Rent(Math.Max(need, InitialBuffer)));
        if (cache.Length < need)
        {
            var grown = Pool.Rent(Math.Max(need, cache.Length * 2));
            cache.AsSpan(0, Length).CopyTo(grown);
            Pool.Return(cache);
            Cache = cache = grown;
        }
        return cache.AsSpan(Length, extra);
    }

    /// <summary>Gives the cache back to the pool; the next read reloads it from the file.</summary>
    public void DropCache()
    {
        ColdReads = 0;
        if (Cache is { } c)
        {
            Cache = null;
            Pool.Return(c);
        }
    }

    /// <summary>Hands the unwritten tail to the operating system (page cache; no fsync).</summary>
    public void WritePending()
    {
        if (Flushed >= Length)
        {
            return;
        }

        File.Write(Cache.AsSpan(Flushed, Length - Flushed), Flushed);
        Flushed = Length;
        NeedsSync = true;
    }

    public byte[] LoadCache()
    {
        if (Cache is { } c)
        {
            return c;
        }

        var buf = Pool.Rent(Math.Max(Length, 1));
        var read = 0;
        while (read < Length)
        {
            var n = File.Read(buf.AsSpan(read, Length - read), read);
            if (n <= 0)
            {
                // The file is shorter than recorded (truncated underneath us): zeros fail every checksum.
                buf.AsSpan(read).Clear();
                break;
            }
            read += n;
        }
        Cache = buf;
        return buf;
    }

    /// <summary>Overwrites bytes already in the file (secure erase) in both cache and file.</summary>
    public void Overwrite(int offset, ReadOnlySpan<byte> bytes)
    {
        if (Cache is { } c)
        {
            bytes.CopyTo(c.AsSpan(offset));
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
        File.Dispose();
        DropCache();
        File = file;
        Cache = content;
        Length = length;
        Flushed = length;
        NeedsSync = false;
    }

    public static byte[] Rent(int size) => Pool.Rent(Math.Max(size, 1));

    public static void ReturnRented(byte[] buffer) => Pool.Return(buffer);

    public void Dispose()
    {
        File.Dispose();
        DropCache();
    }
}
