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
    int Length, RecordKind Kind, int SubjectLength, int HeaderLength, int DataLength, ulong Seq, long Timestamp, long TtlExpiry,
    bool Compact = false)
{
    public int SubjectOffset => (Compact ? RecordCodec.CompactFixedSize : RecordCodec.FixedSize) + (TtlExpiry != 0 ? 8 : 0);
    public int HeaderOffset => SubjectOffset + SubjectLength;
    public int DataOffset => HeaderOffset + HeaderLength;
}

/// <summary>
/// On-disk record, little endian, in one of two layouts:
/// <code>
///  0 u32 total length (whole record)   4 u8 kind   5 u8 flags (bit 0: TTL present, bit 1: compact)
///  6 u16 subject length
/// full (a message with headers; every record written before the compact layout existed):
///  8 u32 header length                12 u64 sequence          20 i64 timestamp (unix ns)   28 ...
/// compact (everything without headers: most messages, every control record):
///  8 u64 sequence                     16 i64 timestamp (unix ns)                           24 ...
/// ... [i64 TTL expiry] subject header data, then u32 CRC-32C of everything before it
/// </code>
/// Data length is implied by the total. The length comes first so a reader can skip a record, and the
/// checksum last so a torn write (any prefix of the record) never verifies. The compact layout drops the
/// header length nobody needs (a 128-byte message on a 9-byte subject: 165 bytes instead of 169, Go's
/// is 167); both layouts are read, so blocks written by earlier builds open unchanged. Flag bits 2-7 are
/// reserved for compression and encryption of the payload.
/// </summary>
internal static class RecordCodec
{
    /// <summary>Fixed part of the full layout (with the header length).</summary>
    public const int FixedSize = 28;

    /// <summary>Fixed part of the compact layout (no header length).</summary>
    public const int CompactFixedSize = 24;

    /// <summary>The smallest record: compact, no subject, no payload (tombstones, skips, markers).</summary>
    public const int MinSize = CompactFixedSize + 4;

    public const int MaxRecord = 64 << 20;
    private const byte FlagTtl = 1;
    private const byte FlagCompact = 2;

    public static int Size(int subjectBytes, int headerLength, int dataLength, bool hasTtl)
        => (headerLength > 0 ? FixedSize : CompactFixedSize) + 4 + (hasTtl ? 8 : 0) + subjectBytes + headerLength + dataLength;

    /// <summary>Bytes of a record other than its subject, headers and data.</summary>
    public static int Framing(bool compact, bool hasTtl) => (compact ? CompactFixedSize : FixedSize) + 4 + (hasTtl ? 8 : 0);

    public static int Write(Span<byte> dest, RecordKind kind, ulong seq, long ts, long ttlExpiry,
        string subject, int subjectBytes, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data)
    {
        var size = Size(subjectBytes, header.Length, data.Length, ttlExpiry != 0);
        var rec = dest[..size];
        var compact = header.Length == 0;
        BinaryPrimitives.WriteInt32LittleEndian(rec, size);
        rec[4] = (byte)kind;
        rec[5] = (byte)((ttlExpiry != 0 ? FlagTtl : 0) | (compact ? FlagCompact : 0));
        BinaryPrimitives.WriteUInt16LittleEndian(rec[6..], (ushort)subjectBytes);
        int pos;
        if (compact)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(rec[8..], seq);
            BinaryPrimitives.WriteInt64LittleEndian(rec[16..], ts);
            pos = CompactFixedSize;
        }
        else
        {
            BinaryPrimitives.WriteInt32LittleEndian(rec[8..], header.Length);
            BinaryPrimitives.WriteUInt64LittleEndian(rec[12..], seq);
            BinaryPrimitives.WriteInt64LittleEndian(rec[20..], ts);
            pos = FixedSize;
        }
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
    public static bool TryRead(ReadOnlySpan<byte> buf, out RecordHeader rec) => TryRead(buf, out rec, verify: true);

    /// <summary>Parses a record whose checksum fails, when its fixed part is still plausible: what a damaged
    /// message claims to be (its sequence and subject), never its content.</summary>
    public static bool TryReadUnverified(ReadOnlySpan<byte> buf, out RecordHeader rec) => TryRead(buf, out rec, verify: false);

    private static bool TryRead(ReadOnlySpan<byte> buf, out RecordHeader rec, bool verify)
    {
        rec = default;
        if (buf.Length < MinSize)
        {
            return false;
        }

        var len = BinaryPrimitives.ReadInt32LittleEndian(buf);
        if (len < MinSize || len > MaxRecord || len > buf.Length)
        {
            return false;
        }

        var kind = (RecordKind)buf[4];
        if (kind is < RecordKind.Message or > RecordKind.Erased)
        {
            return false;
        }

        var flags = buf[5];
        if ((flags & ~(FlagTtl | FlagCompact)) != 0)
        {
            return false;
        }

        var compact = (flags & FlagCompact) != 0;
        int subj = BinaryPrimitives.ReadUInt16LittleEndian(buf[6..]);
        var hdr = compact ? 0 : BinaryPrimitives.ReadInt32LittleEndian(buf[8..]);
        var fixedPart = Framing(compact, (flags & FlagTtl) != 0);
        if (hdr < 0 || (long)fixedPart + subj + hdr > len)
        {
            return false;
        }

        if (verify && Crc32C.Compute(buf[..(len - 4)]) != BinaryPrimitives.ReadUInt32LittleEndian(buf[(len - 4)..]))
        {
            return false;
        }

        var seqAt = compact ? 8 : 12;
        var ttl = (flags & FlagTtl) != 0 ? BinaryPrimitives.ReadInt64LittleEndian(buf[(compact ? CompactFixedSize : FixedSize)..]) : 0;
        rec = new RecordHeader(len, kind, subj, hdr, len - fixedPart - subj - hdr,
            BinaryPrimitives.ReadUInt64LittleEndian(buf[seqAt..]), BinaryPrimitives.ReadInt64LittleEndian(buf[(seqAt + 8)..]), ttl, compact);
        return true;
    }
}
