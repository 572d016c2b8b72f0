using System.Buffers.Binary;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// Sidecar written when a block is sealed: every record's header and subject, without payloads, so a
/// restart or an index page rebuild reads a file a fraction of the block's size. Trusted only when its
/// checksum verifies and the block still has the length it describes; otherwise the block is scanned.
/// Version 2 (written now) stores each distinct subject once in a table and each record as a few
/// varints (offsets implied by the lengths, sequence and time as deltas): ~10 bytes a message instead of
/// version 1's 40 plus the subject, which is still read.
/// <code>
/// header: u32 magic, i32 version, i32 block length, i32 records, [v2: i32 subjects]
/// v1 entry: i32 offset, i32 length, u8 kind, u8 compact (0: a full record, as every build that wrote version 1 did), u16 subject length, i32 header length, u64 seq,
///           i64 time, i64 TTL expiry, subject
/// v2: u32 position of each subject, then each subject (u16 length, bytes); entry: u8 kind | 0x10 TTL |
///     0x20 header | 0x40 compact record, varint length, zigzag varint seq delta, zigzag varint time delta, varint subject
///     index + 1 (0: none), [varint header length], [i64 TTL expiry]
/// then u32 CRC-32C of everything before it
/// </code>
/// Version 3, the seal summary (what the server writes since branch jsscale5, <see cref="FileStoreOptions.BlockIndexes"/>
/// off): no entries, only what a sealed block was when it was sealed, so a block later cut short exactly at
/// a record boundary (which scans clean) is still found and its missing messages reported. 36 bytes a block
/// instead of ~8 a message; replays and index page rebuilds read the block's records instead.
/// <code>
/// u32 magic, i32 version 3, i32 block length, i32 0, u64 first message sequence, u64 last message sequence, u32 CRC-32C
/// </code>
/// </summary>
internal static class BlockIndexFile
{
    private const uint Magic = 0x5844494E; // "NIDX"
    private const int Version = 2;
    private const int HeaderSizeV1 = 16;
    private const int HeaderSizeV2 = 20;
    private const int EntrySizeV1 = 40;
    private const int VersionSummary = 3;
    private const int SummarySize = 36;
    private const byte FlagTtl = 0x10;
    private const byte FlagHeader = 0x20;
    private const byte FlagCompact = 0x40;

    public delegate void EntryHandler(int offset, in RecordHeader rec, ReadOnlySpan<byte> subject);

    public static string PathFor(string blockPath) => Path.ChangeExtension(blockPath, ".idx");

    /// <summary>Writes the index of a block whose records are all in <paramref name="block"/> (trusted).</summary>
    public static void Write(IStoreFileSystem fs, string blockPath, byte[] block, int length)
        => Encode(fs, blockPath, new ArraySource(block, length), length);

    /// <summary>Writes the index of a block whose records are all written to <paramref name="block"/> (a
    /// sealed active block, whose bytes are no longer in memory), reading it in chunks from the page cache
    /// and writing the index in chunks, so sealing costs no block-sized buffer.</summary>
    public static void WriteFromFile(IStoreFileSystem fs, string blockPath, IStoreFile block, int length)
    {
        using var reader = new ChunkedBlockReader(block, length);
        Encode(fs, blockPath, reader, length);
    }

    /// <summary>Writes the seal summary (version 3) of a block of <paramref name="length"/> bytes whose
    /// messages lie in [<paramref name="firstSeq"/>, <paramref name="lastSeq"/>] (0, 0: none). Not fsynced,
    /// like the full index: a lost one only means a later cut of the block cannot be told from its end.</summary>
    public static void WriteSummary(IStoreFileSystem fs, string blockPath, int length, ulong firstSeq, ulong lastSeq)
    {
        Span<byte> b = stackalloc byte[SummarySize];
        BinaryPrimitives.WriteUInt32LittleEndian(b, Magic);
        BinaryPrimitives.WriteInt32LittleEndian(b[4..], VersionSummary);
        BinaryPrimitives.WriteInt32LittleEndian(b[8..], length);
        BinaryPrimitives.WriteInt32LittleEndian(b[12..], 0);
        BinaryPrimitives.WriteUInt64LittleEndian(b[16..], firstSeq);
        BinaryPrimitives.WriteUInt64LittleEndian(b[24..], lastSeq);
        BinaryPrimitives.WriteUInt32LittleEndian(b[32..], Crc32C.Compute(b[..32]));
        var idxPath = PathFor(blockPath);
        var tmp = idxPath + ".tmp";
        using (var f = fs.Open(tmp, StoreFileMode.Create))
        {
            f.Write(b, 0);
        }
        fs.Rename(tmp, idxPath);
    }

    /// <summary>A verified seal summary (version 3) or full index describes a block of exactly this length.</summary>
    public static bool Describes(IStoreFileSystem fs, string blockPath, long blockLength)
        => LoadVerified(fs, blockPath) is { } buf && BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(8)) == blockLength;

    /// <summary>Entries are at most ~40 bytes; subjects at most 64 KB.</summary>
    private const int OutChunk = 128 * 1024;

    /// <summary>Two passes over the records: the subject table, then the entries. Never indexes a block it
    /// cannot fully parse (recovery will scan it instead). Not fsynced: an index is only trusted when its
    /// checksum verifies and the block has the length it describes, so a torn or lost index only costs a
    /// scan.</summary>
    private static void Encode(IStoreFileSystem fs, string blockPath, IRecordSource source, int length)
    {
        var subjects = new SubjectTable();
        var count = 0;
        for (var off = 0; off < length;)
        {
            if (!source.TryRead(off, out var rec, out var bytes))
            {
                subjects.Dispose();
                return;
            }

            if (rec.SubjectLength > 0)
            {
                subjects.Add(bytes.Slice(rec.SubjectOffset, rec.SubjectLength));
            }
            count++;
            off += rec.Length;
        }

        var idxPath = PathFor(blockPath);
        var tmp = idxPath + ".tmp";
        var complete = true;
        using (var f = fs.Open(tmp, StoreFileMode.Create))
        {
            var w = new ChunkedWriter(f);
            try
            {
                Span<byte> h = stackalloc byte[HeaderSizeV2];
                BinaryPrimitives.WriteUInt32LittleEndian(h, Magic);
                BinaryPrimitives.WriteInt32LittleEndian(h[4..], Version);
                BinaryPrimitives.WriteInt32LittleEndian(h[8..], length);
                BinaryPrimitives.WriteInt32LittleEndian(h[12..], count);
                BinaryPrimitives.WriteInt32LittleEndian(h[16..], subjects.Count);
                w.Put(h);
                subjects.WriteTo(ref w, HeaderSizeV2);
                ulong prevSeq = 0;
                long prevTs = 0;
                Span<byte> e = stackalloc byte[48];
                for (var off = 0; off < length;)
                {
                    if (!source.TryRead(off, out var rec, out var bytes))
                    {
                        complete = false; // the file changed between the passes
                        break;
                    }

                    var n = 1;
                    e[0] = (byte)((byte)rec.Kind | (rec.TtlExpiry != 0 ? FlagTtl : 0) | (rec.HeaderLength > 0 ? FlagHeader : 0)
                        | (rec.Compact ? FlagCompact : 0));
                    n += PutVarint(e[n..], (ulong)rec.Length);
                    n += PutVarint(e[n..], ZigZag((long)(rec.Seq - prevSeq)));
                    n += PutVarint(e[n..], ZigZag(rec.Timestamp - prevTs));
                    n += PutVarint(e[n..], rec.SubjectLength == 0 ? 0 : (ulong)subjects.IndexOf(bytes.Slice(rec.SubjectOffset, rec.SubjectLength)) + 1);
                    if (rec.HeaderLength > 0)
                    {
                        n += PutVarint(e[n..], (ulong)rec.HeaderLength);
                    }
                    if (rec.TtlExpiry != 0)
                    {
                        BinaryPrimitives.WriteInt64LittleEndian(e[n..], rec.TtlExpiry);
                        n += 8;
                    }
                    w.Put(e[..n]);
                    (prevSeq, prevTs) = (rec.Seq, rec.Timestamp);
                    off += rec.Length;
                }
                w.Finish();
            }
            finally
            {
                w.Dispose();
                subjects.Dispose();
            }
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

    private static ulong ZigZag(long v) => (ulong)((v << 1) ^ (v >> 63));

    private static long UnZigZag(ulong v) => (long)(v >> 1) ^ -(long)(v & 1);

    private static int PutVarint(Span<byte> dest, ulong v)
    {
        var n = 0;
        while (v >= 0x80)
        {
            dest[n++] = (byte)(v | 0x80);
            v >>= 7;
        }
        dest[n++] = (byte)v;
        return n;
    }

    private static ulong GetVarint(ReadOnlySpan<byte> src, ref int pos)
    {
        ulong v = 0;
        for (var shift = 0; shift < 64; shift += 7)
        {
            var b = src[pos++];
            v |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return v;
            }
        }
        throw new InvalidDataException("varint too long");
    }

    /// <summary>Where an encoder reads a block's records from.</summary>
    internal interface IRecordSource
    {
        bool TryRead(int offset, out RecordHeader rec, out ReadOnlySpan<byte> bytes);
    }

    private sealed class ArraySource(byte[] block, int length) : IRecordSource
    {
        public bool TryRead(int offset, out RecordHeader rec, out ReadOnlySpan<byte> bytes)
        {
            bytes = block.AsSpan(offset, length - offset);
            if (!RecordCodec.TryRead(bytes, out rec))
            {
                return false;
            }

            bytes = bytes[..rec.Length];
            return true;
        }
    }

    /// <summary>The distinct subjects of a block, in first-seen order; bytes kept in a pooled buffer and
    /// looked up by a 64-bit FNV-1a hash (probing on a collision), so indexing allocates per subject, not
    /// per record.</summary>
    private sealed class SubjectTable : IDisposable
    {
        private readonly Dictionary<ulong, int> _byHash = [];
        private readonly List<(int Start, int Length)> _entries = [];
        private byte[] _bytes = BlockBufferPool.Rent(16 * 1024);
        private int _used;

        public int Count => _entries.Count;

        public void Add(ReadOnlySpan<byte> subject)
        {
            if (IndexOf(subject) >= 0)
            {
                return;
            }

            if (_used + subject.Length > _bytes.Length)
            {
                var grown = BlockBufferPool.Rent(Math.Max(_bytes.Length * 2, _used + subject.Length));
                _bytes.AsSpan(0, _used).CopyTo(grown);
                BlockBufferPool.Return(_bytes);
                _bytes = grown;
            }
            subject.CopyTo(_bytes.AsSpan(_used));
            var key = Hash(subject);
            while (_byHash.ContainsKey(key))
            {
                key = Probe(key);
            }
            _byHash[key] = _entries.Count;
            _entries.Add((_used, subject.Length));
            _used += subject.Length;
        }

        public int IndexOf(ReadOnlySpan<byte> subject)
        {
            var key = Hash(subject);
            while (_byHash.TryGetValue(key, out var i))
            {
                var (start, len) = _entries[i];
                if (subject.SequenceEqual(_bytes.AsSpan(start, len)))
                {
                    return i;
                }
                key = Probe(key);
            }
            return -1;
        }

        /// <summary>The position table (absolute positions, the table itself starting at <paramref name="at"/>)
        /// and the subjects.</summary>
        public void WriteTo(ref ChunkedWriter w, int at)
        {
            Span<byte> b = stackalloc byte[4];
            var pos = at + 4 * _entries.Count;
            foreach (var (_, len) in _entries)
            {
                BinaryPrimitives.WriteInt32LittleEndian(b, pos);
                w.Put(b);
                pos += 2 + len;
            }
            foreach (var (start, len) in _entries)
            {
                BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)len);
                w.Put(b[..2]);
                w.Put(_bytes.AsSpan(start, len));
            }
        }

        private static ulong Hash(ReadOnlySpan<byte> s)
        {
            var h = 14695981039346656037UL;
            foreach (var c in s)
            {
                h = (h ^ c) * 1099511628211UL;
            }
            return h;
        }

        private static ulong Probe(ulong key) => (key * 6364136223846793005UL) + 1442695040888963407UL;

        public void Dispose()
        {
            BlockBufferPool.Return(_bytes);
            _bytes = [];
        }
    }

    /// <summary>Writes an index in pooled chunks, checksumming as it goes.</summary>
    private struct ChunkedWriter(IStoreFile file) : IDisposable
    {
        private byte[] _buf = BlockBufferPool.Rent(OutChunk);
        private int _pos;
        private long _written;
        private uint _crc = Crc32C.Seed;

        public void Put(ReadOnlySpan<byte> bytes)
        {
            while (bytes.Length > 0)
            {
                if (_pos == _buf.Length)
                {
                    Flush();
                }
                var n = Math.Min(bytes.Length, _buf.Length - _pos);
                bytes[..n].CopyTo(_buf.AsSpan(_pos));
                _pos += n;
                bytes = bytes[n..];
            }
        }

        private void Flush()
        {
            _crc = Crc32C.Update(_crc, _buf.AsSpan(0, _pos));
            file.Write(_buf.AsSpan(0, _pos), _written);
            _written += _pos;
            _pos = 0;
        }

        public void Finish()
        {
            if (_pos + 4 > _buf.Length)
            {
                Flush();
            }
            _crc = Crc32C.Update(_crc, _buf.AsSpan(0, _pos));
            BinaryPrimitives.WriteUInt32LittleEndian(_buf.AsSpan(_pos), ~_crc);
            file.Write(_buf.AsSpan(0, _pos + 4), _written);
            _written += _pos + 4;
            _pos = 0;
        }

        public void Dispose()
        {
            if (_buf.Length > 0)
            {
                BlockBufferPool.Return(_buf);
                _buf = [];
            }
        }
    }

    /// <summary>Records of a block file read through a pooled window of a few hundred KB.</summary>
    internal sealed class ChunkedBlockReader(IStoreFile file, int length) : IRecordSource, IDisposable
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
            if (!Holds(offset, RecordCodec.MinSize) && !Fill(offset, RecordCodec.MinSize))
            {
                return false;
            }

            var len = BinaryPrimitives.ReadInt32LittleEndian(_buf.AsSpan(offset - _start));
            if (len < RecordCodec.MinSize || len > length - offset || len > RecordCodec.MaxRecord)
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

    /// <summary>The content of a block's index or seal summary that verifies, whatever length it describes.</summary>
    private static byte[]? LoadVerified(IStoreFileSystem fs, string blockPath)
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
        if (buf.Length < HeaderSizeV1 + 4
            || BinaryPrimitives.ReadUInt32LittleEndian(buf) != Magic
            || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) is not (1 or 2 or VersionSummary)
            || (BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) == VersionSummary && buf.Length != SummarySize)
            || Crc32C.Compute(buf.AsSpan(0, buf.Length - 4)) != BinaryPrimitives.ReadUInt32LittleEndian(buf.AsSpan(buf.Length - 4)))
        {
            return null;
        }
        return buf;
    }

    /// <summary>The verified content of a block's index, or null when it is missing, damaged, a seal summary
    /// or does not describe a block of <paramref name="blockLength"/> bytes (then the block itself must be read).</summary>
    public static byte[]? TryLoad(IStoreFileSystem fs, string blockPath, long blockLength)
        => LoadVerified(fs, blockPath) is { } buf && BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(8)) == blockLength
            && BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) != VersionSummary ? buf : null;

    /// <summary>Walks the entries of an index returned by <see cref="TryLoad"/> (either version).</summary>
    public ref struct Reader
    {
        private readonly byte[] _buf;
        private readonly bool _v1;
        private readonly int _count;
        private readonly int _subjects;
        private Mark _at;

        public Reader(byte[] buf)
        {
            _buf = buf;
            _v1 = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) == 1;
            _count = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(12));
            _subjects = _v1 ? 0 : BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(16));
            _at = new Mark(0, _v1 ? HeaderSizeV1 : FirstEntry(buf, _subjects), 0, 0, 0);
        }

        /// <summary>A place in the walk, to resume a later walk there (<see cref="Seek"/>).</summary>
        public readonly record struct Mark(int Index, int Pos, int Offset, ulong PrevSeq, long PrevTs);

        public readonly Mark Position => _at;

        public void Seek(Mark at) => _at = at;

        private static int FirstEntry(byte[] buf, int subjects)
        {
            if (subjects == 0)
            {
                return HeaderSizeV2;
            }

            var last = BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(HeaderSizeV2 + 4 * (subjects - 1)));
            return last + 2 + BinaryPrimitives.ReadUInt16LittleEndian(buf.AsSpan(last));
        }

        public bool Next(out int offset, out RecordHeader rec, out ReadOnlySpan<byte> subject)
        {
            if (_at.Index >= _count)
            {
                offset = 0;
                rec = default;
                subject = default;
                return false;
            }

            if (_v1)
            {
                var e = _buf.AsSpan(_at.Pos);
                offset = BinaryPrimitives.ReadInt32LittleEndian(e);
                var len = BinaryPrimitives.ReadInt32LittleEndian(e[4..]);
                int subj = BinaryPrimitives.ReadUInt16LittleEndian(e[10..]);
                var hdr = BinaryPrimitives.ReadInt32LittleEndian(e[12..]);
                var ttl = BinaryPrimitives.ReadInt64LittleEndian(e[32..]);
                // Builds that wrote version 1 wrote only full records (0 here); a compact one is marked 1.
                var compactV1 = e[9] == 1;
                var data = len - RecordCodec.Framing(compactV1, ttl != 0) - subj - hdr;
                rec = new RecordHeader(len, (RecordKind)e[8], subj, hdr, data,
                    BinaryPrimitives.ReadUInt64LittleEndian(e[16..]), BinaryPrimitives.ReadInt64LittleEndian(e[24..]), ttl, compactV1);
                subject = e.Slice(EntrySizeV1, subj);
                _at = _at with { Index = _at.Index + 1, Pos = _at.Pos + EntrySizeV1 + subj };
                return true;
            }

            var b = _buf.AsSpan();
            var pos = _at.Pos;
            var flags = b[pos++];
            var length = (int)GetVarint(b, ref pos);
            var seq = _at.PrevSeq + (ulong)UnZigZag(GetVarint(b, ref pos));
            var ts = _at.PrevTs + UnZigZag(GetVarint(b, ref pos));
            var subjectIndex = (int)GetVarint(b, ref pos);
            var header = (flags & FlagHeader) != 0 ? (int)GetVarint(b, ref pos) : 0;
            long ttlExpiry = 0;
            if ((flags & FlagTtl) != 0)
            {
                ttlExpiry = BinaryPrimitives.ReadInt64LittleEndian(b[pos..]);
                pos += 8;
            }
            subject = default;
            if (subjectIndex > 0)
            {
                var at = BinaryPrimitives.ReadInt32LittleEndian(b[(HeaderSizeV2 + 4 * (subjectIndex - 1))..]);
                subject = b.Slice(at + 2, BinaryPrimitives.ReadUInt16LittleEndian(b[at..]));
            }
            var compact = (flags & FlagCompact) != 0;
            var dataLength = length - RecordCodec.Framing(compact, ttlExpiry != 0) - subject.Length - header;
            rec = new RecordHeader(length, (RecordKind)(flags & 0x0F), subject.Length, header, dataLength, seq, ts, ttlExpiry, compact);
            offset = _at.Offset;
            _at = new Mark(_at.Index + 1, pos, _at.Offset + length, seq, ts);
            return true;
        }
    }

    /// <summary>Message sequences a verifiable index lists beyond <paramref name="length"/>: records the
    /// block held when it was sealed but that are no longer in the file (it was cut short). From a seal
    /// summary: every sequence above <paramref name="after"/> (the highest message still in the block) up to
    /// the last the block held, the bytes cut off counted with the first (a summary has no record lengths;
    /// messages removed before the cut are among them, which are gone either way).</summary>
    public static List<(ulong Seq, int Length)> MessagesBeyond(IStoreFileSystem fs, string blockPath, long length, ulong after)
    {
        var result = new List<(ulong, int)>();
        if (LoadVerified(fs, blockPath) is not { } buf || BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(8)) is var sealedLength && sealedLength <= length)
        {
            return result;
        }

        if (BinaryPrimitives.ReadInt32LittleEndian(buf.AsSpan(4)) == VersionSummary)
        {
            var first = Math.Max(BinaryPrimitives.ReadUInt64LittleEndian(buf.AsSpan(16)), after + 1);
            var last = BinaryPrimitives.ReadUInt64LittleEndian(buf.AsSpan(24));
            for (var seq = first; seq <= last && seq != 0; seq++)
            {
                result.Add((seq, seq == first ? (int)(sealedLength - length) : 0));
            }
            return result;
        }

        var reader = new Reader(buf);
        while (reader.Next(out var offset, out var rec, out _))
        {
            if (rec.Kind == RecordKind.Message && offset + (long)rec.Length > length)
            {
                result.Add((rec.Seq, rec.Length));
            }
        }
        return result;
    }

    public static void Delete(IStoreFileSystem fs, string blockPath) => fs.Delete(PathFor(blockPath));
}
