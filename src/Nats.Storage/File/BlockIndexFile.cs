using System.Buffers.Binary;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// Sidecar written when a block is sealed: every record's header and subject, without payloads, so a
/// restart rebuilds the index from a file a fraction of the block's size. Trusted only when its
/// checksum verifies and the block still has the length it describes; otherwise the block is scanned.
/// </summary>
internal static class BlockIndexFile
{
    private const uint Magic = 0x5844494E; // "NIDX"
    private const int Version = 1;
    private const int HeaderSize = 16;
    private const int EntrySize = 40;

    public delegate void EntryHandler(int offset, in RecordHeader rec, ReadOnlySpan<byte> subject);

    public static string PathFor(string blockPath) => Path.ChangeExtension(blockPath, ".idx");

    /// <summary>Writes the index of a block whose records are all in <paramref name="block"/> (trusted).</summary>
    public static void Write(IStoreFileSystem fs, string blockPath, ReadOnlySpan<byte> block)
    {
        var size = HeaderSize + 4;
        var count = 0;
        for (var off = 0; off < block.Length;)
        {
            if (!RecordCodec.TryRead(block[off..], out var rec))
            {
                return; // never index a block we cannot fully parse; recovery will scan it instead
            }

            size += EntrySize + rec.SubjectLength;
            count++;
            off += rec.Length;
        }
        var buf = System.Buffers.ArrayPool<byte>.Shared.Rent(size);
        BinaryPrimitives.WriteUInt32LittleEndian(buf, Magic);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(4), Version);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(8), block.Length);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(12), count);
        var pos = HeaderSize;
        for (var off = 0; off < block.Length;)
        {
            RecordCodec.TryRead(block[off..], out var rec);
            WriteEntry(buf.AsSpan(pos), off, rec, block.Slice(off + rec.SubjectOffset, rec.SubjectLength));
            pos += EntrySize + rec.SubjectLength;
            off += rec.Length;
        }
        BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(pos), Crc32C.Compute(buf.AsSpan(0, pos)));
        var idxPath = PathFor(blockPath);
        var tmp = idxPath + ".tmp";
        // Not fsynced: an index is only trusted when its checksum verifies and the block has the length
        // it describes, so a torn or lost index only costs a scan at the next recovery.
        using (var f = fs.Open(tmp, StoreFileMode.Create))
        {
            f.Write(buf.AsSpan(0, size), 0);
        }

        System.Buffers.ArrayPool<byte>.Shared.Return(buf);
        fs.Rename(tmp, idxPath);
    }

    /// <summary>Writes the index of a block whose records are all written to <paramref name="block"/> (a
    /// sealed active block, whose bytes are no longer in memory), reading it in chunks from the page cache
    /// and writing the index in chunks, so sealing costs no block-sized buffer.</summary>
    public static void WriteFromFile(IStoreFileSystem fs, string blockPath, IStoreFile block, int length)
    {
        var reader = new ChunkedBlockReader(block, length);
        var outBuf = BlockBufferPool.Rent(OutChunk);
        var idxPath = PathFor(blockPath);
        var tmp = idxPath + ".tmp";
        try
        {
            var count = 0;
            for (var off = 0; off < length;)
            {
                if (!reader.TryRead(off, out var rec, out _))
                {
                    return; // never index a block we cannot fully parse; recovery will scan it instead
                }

                count++;
                off += rec.Length;
            }
            BinaryPrimitives.WriteUInt32LittleEndian(outBuf, Magic);
            BinaryPrimitives.WriteInt32LittleEndian(outBuf.AsSpan(4), Version);
            BinaryPrimitives.WriteInt32LittleEndian(outBuf.AsSpan(8), length);
            BinaryPrimitives.WriteInt32LittleEndian(outBuf.AsSpan(12), count);
            var pos = HeaderSize;
            long written = 0;
            var crc = Crc32C.Seed;
            var complete = true;
            // Not fsynced, as Write: only a verifying index whose block has its length is trusted.
            using (var f = fs.Open(tmp, StoreFileMode.Create))
            {
                for (var off = 0; off < length;)
                {
                    if (!reader.TryRead(off, out var rec, out var bytes))
                    {
                        complete = false; // the file changed between the passes
                        break;
                    }

                    if (pos + EntrySize + rec.SubjectLength + 4 > outBuf.Length)
                    {
                        crc = Crc32C.Update(crc, outBuf.AsSpan(0, pos));
                        f.Write(outBuf.AsSpan(0, pos), written);
                        written += pos;
                        pos = 0;
                    }
                    WriteEntry(outBuf.AsSpan(pos), off, rec, bytes.Slice(rec.SubjectOffset, rec.SubjectLength));
                    pos += EntrySize + rec.SubjectLength;
                    off += rec.Length;
                }
                crc = Crc32C.Update(crc, outBuf.AsSpan(0, pos));
                BinaryPrimitives.WriteUInt32LittleEndian(outBuf.AsSpan(pos), ~crc);
                f.Write(outBuf.AsSpan(0, pos + 4), written);
            }
            if (complete)
            {
                fs.Rename(tmp, idxPath);
            }
            else
            {
                fs.Delete(tmp);
            }
        }
        finally
        {
            BlockBufferPool.Return(outBuf);
            reader.Dispose();
        }
    }

    /// <summary>Entries are at most 40 bytes plus a 64 KB subject.</summary>
    private const int OutChunk = 128 * 1024;

    private static void WriteEntry(Span<byte> e, int offset, in RecordHeader rec, ReadOnlySpan<byte> subject)
    {
        BinaryPrimitives.WriteInt32LittleEndian(e, offset);
        BinaryPrimitives.WriteInt32LittleEndian(e[4..], rec.Length);
        e[8] = (byte)rec.Kind;
        e[9] = 0;
        BinaryPrimitives.WriteUInt16LittleEndian(e[10..], (ushort)rec.SubjectLength);
        BinaryPrimitives.WriteInt32LittleEndian(e[12..], rec.HeaderLength);
        BinaryPrimitives.WriteUInt64LittleEndian(e[16..], rec.Seq);
        BinaryPrimitives.WriteInt64LittleEndian(e[24..], rec.Timestamp);
        BinaryPrimitives.WriteInt64LittleEndian(e[32..], rec.TtlExpiry);
        subject.CopyTo(e[EntrySize..]);
    }

    /// <summary>Records of a block file read through a pooled window of a few hundred KB.</summary>
    private sealed class ChunkedBlockReader(IStoreFile file, int length) : IDisposable
    {
        private const int Chunk = 256 * 1024;
        private byte[] _buf = BlockBufferPool.Rent(Chunk);
        private int _start;
        private int _count;

        /// <summary>The verified record at <paramref name="offset"/> and its bytes.</summary>
        public bool TryRead(int offset, out RecordHeader rec, out ReadOnlySpan<byte> bytes)
        {
            bytes = default;
            rec = default;
            if (!Holds(offset, RecordCodec.Overhead) && !Fill(offset, RecordCodec.Overhead))
            {
                return false;
            }

            var len = BinaryPrimitives.ReadInt32LittleEndian(_buf.AsSpan(offset - _start));
            if (len < RecordCodec.Overhead || len > length - offset || len > RecordCodec.MaxRecord)
            {
                return false;
            }

            if (!Holds(offset, len) && !Fill(offset, len))
            {
                return false;
            }

            bytes = _buf.AsSpan(offset - _start, len);
            return RecordCodec.TryRead(bytes, out rec) && rec.Length == len;
        }

        private bool Holds(int offset, int len) => offset >= _start && offset + (long)len <= _start + (long)_count;

        private bool Fill(int offset, int need)
        {
            if (_buf.Length < need)
            {
                BlockBufferPool.Return(_buf);
                _buf = BlockBufferPool.Rent(need);
            }
            var want = Math.Min(_buf.Length, length - offset);
            var read = 0;
            while (read < want)
            {
                var n = file.Read(_buf.AsSpan(read, want - read), offset + read);
                if (n <= 0)
                {
                    break;
                }

                read += n;
            }
            (_start, _count) = (offset, read);
            return read >= need;
        }

        public void Dispose() => BlockBufferPool.Return(_buf);
    }

    /// <summary>Replays a valid index; false (having called nothing) when it is missing, damaged or stale.</summary>
    public static bool TryReplay(IStoreFileSystem fs, string blockPath, long blockLength, EntryHandler handler)
    {
        if (TryLoad(fs, blockPath, blockLength) is not { } buf)
        {
            return false;
        }

        var reader = new Reader(buf);
        while (reader.Next(out var offset, out var rec, out var subject))
        {
            handler(offset, rec, subject);
        }
        return true;
    }

    /// <summary>The verified content of a block's index, or null when it is missing, damaged or does not
    /// describe a block of <paramref name="blockLength"/> bytes (then the block itself must be read).</summary>
    public static byte[]? TryLoad(IStoreFileSystem fs, string blockPath, long blockLength)
    {
        var idxPath = PathFor(blockPath);
        byte[] buf;
        try
        {
            if (!fs.FileExists(idxPath))
            {
                return null;
            }

            using var f = fs.Open(idxPath, StoreFileMode.Open);
            buf = f.ReadAll();
        }
        catch (IOException)
        {
            return null;
        }
        if (buf.Length < HeaderSize + 4
            || BinaryPrimitives.ReadUInt32LittleEndian(buf) != Magic
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) != Version
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(8)) != blockLength
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            return null;
        }
        return buf;
    }

    /// <summary>Walks the entries of an index returned by <see cref="TryLoad"/>.</summary>
    public ref struct Reader(byte[] buf)
    {
        private readonly int _count = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(12));
        private int _index;
        private int _pos = HeaderSize;

        /// <summary>Where the next entry starts, to resume a later walk there (<see cref="Seek"/>).</summary>
        public readonly (int Index, int Pos) Position => (_index, _pos);

        public void Seek((int Index, int Pos) at) => (_index, _pos) = at;

        public bool Next(out int offset, out RecordHeader rec, out ReadOnlySpan<byte> subject)
        {
            if (_index >= _count)
            {
                offset = 0;
                rec = default;
                subject = default;
                return false;
            }

            var e = buf.AsSpan(_pos);
            offset = BinaryPrimitives.ReadInt32LittleEndian(e);
            var len = BinaryPrimitives.ReadInt32LittleEndian(e[4..]);
            int subj = BinaryPrimitives.ReadUInt16LittleEndian(e[10..]);
            var hdr = BinaryPrimitives.ReadInt32LittleEndian(e[12..]);
            var ttl = BinaryPrimitives.ReadInt64LittleEndian(e[32..]);
            var data = len - RecordCodec.Overhead - (ttl != 0 ? 8 : 0) - subj - hdr;
            rec = new RecordHeader(len, (RecordKind)e[8], subj, hdr, data,
                BinaryPrimitives.ReadUInt64LittleEndian(e[16..]), BinaryPrimitives.ReadInt64LittleEndian(e[24..]), ttl);
            subject = e.Slice(EntrySize, subj);
            _pos += EntrySize + subj;
            _index++;
            return true;
        }
    }

    /// <summary>Message sequences a verifiable index lists beyond <paramref name="length"/>: records the
    /// block held when it was sealed but that are no longer in the file (it was cut short).</summary>
    public static List<(ulong Seq, int Length)> MessagesBeyond(IStoreFileSystem fs, string blockPath, long length)
    {
        var result = new List<(ulong, int)>();
        byte[] buf;
        try
        {
            if (!fs.FileExists(PathFor(blockPath)))
            {
                return result;
            }

            using var f = fs.Open(PathFor(blockPath), StoreFileMode.Open);
            buf = f.ReadAll();
        }
        catch (IOException)
        {
            return result;
        }
        if (buf.Length < HeaderSize + 4
            || BinaryPrimitives.ReadUInt32LittleEndian(buf) != Magic
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(8)) <= length
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            return result;
        }

        var count = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(12));
        var pos = HeaderSize;
        for (var i = 0; i < count; i++)
        {
            var e = buf.AsSpan(pos);
            var offset = BinaryPrimitives.ReadInt32LittleEndian(e);
            var len = BinaryPrimitives.ReadInt32LittleEndian(e[4..]);
            if ((RecordKind)e[8] == RecordKind.Message && offset + (long)len > length)
            {
                result.Add((BinaryPrimitives.ReadUInt64LittleEndian(e[16..]), len));
            }

            pos += EntrySize + BinaryPrimitives.ReadUInt16LittleEndian(e[10..]);
        }
        return result;
    }

    public static void Delete(IStoreFileSystem fs, string blockPath) => fs.Delete(PathFor(blockPath));
}
