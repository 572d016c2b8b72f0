using System.Buffers.Binary;

namespace Nats.Storage.File;

/// <summary>
/// A scan of a block that is not in memory (a consumer reading a stream from disk) reads the file
/// through a few 256 KB windows instead of loading the whole 8 MB block: one pread per window from the
/// page cache, and memory that does not depend on the block size. Each window covers part of one
/// block's written bytes; a block's <see cref="MessageBlock.Generation"/> changes when bytes already
/// written change (erase, rewrite, removal), which retires its windows.
/// </summary>
internal sealed class ReadWindows : IDisposable
{
    private const int WindowSize = 256 * 1024;
    private const int Count = 4;
    private readonly Window[] _windows = [new(), new(), new(), new()];
    private long _tick;

    private sealed class Window
    {
        public byte[]? Buf;
        public MessageBlock? Block;
        public int Generation;
        public int Start;
        public int Length;
        public long LastUse;
    }

    /// <summary>The record at <paramref name="offset"/> of a block's written bytes: its window buffer, its
    /// index there and the bytes available from it; false when the file does not hold a whole record.</summary>
    public bool TryRead(MessageBlock block, int offset, out byte[] buf, out int at, out int avail)
    {
        Window? reuse = null;
        foreach (var w in _windows)
        {
            if (w.Block != block || w.Generation != block.Generation)
            {
                continue;
            }

            reuse = w;
            if (offset >= w.Start && offset - w.Start + RecordCodec.MinSize <= w.Length)
            {
                var len = BinaryPrimitives.ReadInt32LittleEndian(w.Buf.AsSpan(offset - w.Start));
                if (len >= RecordCodec.MinSize && offset - w.Start + (long)len <= w.Length)
                {
                    w.LastUse = ++_tick;
                    (buf, at, avail) = (w.Buf!, offset - w.Start, w.Length - (offset - w.Start));
                    return true;
                }
            }
        }
        var target = reuse ?? _windows.MinBy(w => w.LastUse)!;
        target.Block = null; // invalid until filled
        if (Fill(target, block, offset))
        {
            target.LastUse = ++_tick;
            (buf, at, avail) = (target.Buf!, 0, target.Length);
            return true;
        }
        (buf, at, avail) = (null!, 0, 0);
        return false;
    }

    private static bool Fill(Window w, MessageBlock block, int offset)
    {
        var limit = block.Flushed - offset;
        if (limit < RecordCodec.MinSize)
        {
            return false;
        }

        w.Buf ??= BlockBufferPool.Rent(WindowSize);
        var read = Read(block, w.Buf, 0, Math.Min(w.Buf.Length, limit), offset);
        if (read < RecordCodec.MinSize)
        {
            return false;
        }

        var len = BinaryPrimitives.ReadInt32LittleEndian(w.Buf);
        if (len < RecordCodec.MinSize || len > limit || len > RecordCodec.MaxRecord)
        {
            return false;
        }

        if (len > read)
        {
            // A record larger than the window: a window of its own size.
            var grown = BlockBufferPool.Rent(len);
            w.Buf.AsSpan(0, read).CopyTo(grown);
            BlockBufferPool.Return(w.Buf);
            w.Buf = grown;
            read += Read(block, grown, read, len - read, offset + read);
            if (read < len)
            {
                return false;
            }
        }
        (w.Block, w.Generation, w.Start, w.Length) = (block, block.Generation, offset, read);
        return true;
    }

    private static int Read(MessageBlock block, byte[] buf, int at, int count, int offset)
    {
        var read = 0;
        while (read < count)
        {
            var n = block.File.Read(buf.AsSpan(at + read, count - read), offset + read);
            if (n <= 0)
            {
                break;
            }

            read += n;
        }
        return read;
    }

    /// <summary>Gives the windows' buffers back (an idle store holds none).</summary>
    public void Release()
    {
        foreach (var w in _windows)
        {
            if (w.Buf is { } b)
            {
                BlockBufferPool.Return(b);
            }

            (w.Buf, w.Block, w.LastUse) = (null, null, 0);
        }
    }

    /// <summary>Some window holds a buffer.</summary>
    public bool Held => _windows.Any(w => w.Buf is not null);

    public void Dispose() => Release();
}
