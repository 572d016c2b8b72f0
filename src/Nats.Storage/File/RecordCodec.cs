using System.Buffers.Binary;
using System.Text;

namespace Nats.Storage.File;

internal enum RecordKind : byte
{
    Message = 1,
    /// <summary>The message with this sequence was removed.</summary>
    Tombstone = 2,
    /// <summary>Sequences up to and including this one are used (skips, or the last sequence kept across block removal).</summary>
    Skip = 3,
    /// <summary>Every message below this sequence is gone (purge, compact).</summary>
    FirstMarker = 4,
    /// <summary>A message whose bytes were overwritten by a secure erase.</summary>
    Erased = 5,
}

/// <summary>The fixed part of a record, parsed and checksum-verified.</summary>
internal readonly record struct RecordHeader(
    int Length, RecordKind Kind, int SubjectLength, int HeaderLength, int DataLength, ulong Seq, long Timestamp, long TtlExpiry)
{
    public int SubjectOffset => RecordCodec.FixedSize + (TtlExpiry != 0 ? 8 : 0);
    public int HeaderOffset => SubjectOffset + SubjectLength;
    public int DataOffset => HeaderOffset + HeaderLength;
}

/// <summary>
/// On-disk record, little endian:
/// <code>
///  0 u32 total length (whole record)   4 u8 kind   5 u8 flags (bit 0: TTL present)
///  6 u16 subject length                8 u32 header length
/// 12 u64 sequence                     20 i64 timestamp (unix ns)
/// 28 [i64 TTL expiry] subject header data, then u32 CRC-32C of everything before it
/// </code>
/// Data length is implied by the total. The length comes first so a reader can skip a record, and the
/// checksum last so a torn write (any prefix of the record) never verifies. Flag bits 1-7 are reserved
/// for compression and encryption of the payload.
/// </summary>
internal static class RecordCodec
{
    public const int FixedSize = 28;
    public const int Overhead = FixedSize + 4;
    public const int MaxRecord = 64 << 20;
    private const byte FlagTtl = 1;

    public static int Size(int subjectBytes, int headerLength, int dataLength, bool hasTtl)
        => Overhead + (hasTtl ? 8 : 0) + subjectBytes + headerLength + dataLength;

    public static int Write(Span<byte> dest, RecordKind kind, ulong seq, long ts, long ttlExpiry,
        string subject, int subjectBytes, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data)
    {
        var size = Size(subjectBytes, header.Length, data.Length, ttlExpiry != 0);
        var rec = dest[..size];
        BinaryPrimitives.WriteInt32LittleEndian(rec, size);
        rec[4] = (byte)kind;
        rec[5] = ttlExpiry != 0 ? FlagTtl : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(rec[6..], (ushort)subjectBytes);
        BinaryPrimitives.WriteInt32LittleEndian(rec[8..], header.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(rec[12..], seq);
        BinaryPrimitives.WriteInt64LittleEndian(rec[20..], ts);
        var pos = FixedSize;
        if (ttlExpiry != 0)
        {
            BinaryPrimitives.WriteInt64LittleEndian(rec[pos..], ttlExpiry);
            pos += 8;
        }
        if (subjectBytes > 0)
        {
            pos += Encoding.UTF8.GetBytes(subject, rec[pos..]);
        }

        header.CopyTo(rec[pos..]);
        pos += header.Length;
        data.CopyTo(rec[pos..]);
        pos += data.Length;
        BinaryPrimitives.WriteUInt32LittleEndian(rec[pos..], Crc32C.Compute(rec[..pos]));
        return size;
    }

    /// <summary>Writes a record that carries only a sequence (tombstone, skip, marker).</summary>
    public static int WriteControl(Span<byte> dest, RecordKind kind, ulong seq, long ts)
        => Write(dest, kind, seq, ts, 0, "", 0, default, default);

    /// <summary>Parses and verifies the record at the start of <paramref name="buf"/>; false for
    /// anything short, implausible or failing its checksum.</summary>
    public static bool TryRead(ReadOnlySpan<byte> buf, out RecordHeader rec)
    {
        rec = default;
        if (buf.Length < Overhead)
        {
            return false;
        }

        var len = BinaryPrimitives.ReadInt32LittleEndian(buf);
        if (len < Overhead || len > MaxRecord || len > buf.Length)
        {
            return false;
        }

        var kind = (RecordKind)buf[4];
        if (kind is < RecordKind.Message or > RecordKind.Erased)
        {
            return false;
        }

        var flags = buf[5];
        if ((flags & ~FlagTtl) != 0)
        {
            return false;
        }

        int subj = BinaryPrimitives.ReadUInt16LittleEndian(buf[6..]);
        var hdr = BinaryPrimitives.ReadInt32LittleEndian(buf[8..]);
        var fixedPart = Overhead + ((flags & FlagTtl) != 0 ? 8 : 0);
        if (hdr < 0 || (long)fixedPart + subj + hdr > len)
        {
            return false;
        }

        if (Crc32C.Compute(buf[..(len - 4)]) != BinaryPrimitives.ReadUInt32LittleEndian(buf[(len - 4)..]))
        {
            return false;
        }

        var ttl = (flags & FlagTtl) != 0 ? BinaryPrimitives.ReadInt64LittleEndian(buf[FixedSize..]) : 0;
        rec = new RecordHeader(len, kind, subj, hdr, len - fixedPart - subj - hdr,
            BinaryPrimitives.ReadUInt64LittleEndian(buf[12..]), BinaryPrimitives.ReadInt64LittleEndian(buf[20..]), ttl);
        return true;
    }
}
