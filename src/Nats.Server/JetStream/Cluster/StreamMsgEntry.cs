using System.Buffers.Binary;
using System.Text;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's streamMsgOp entry in a stream group's log: op 4, lseq u64 (the stream's last sequence before this
/// message, so that re-applying it is recognised), ts i64 (nanoseconds), then u16-prefixed subject, reply and
/// header and a u32-prefixed body, all little-endian. The S2 form (op 14) is not produced.
/// </summary>
internal readonly ref struct StreamMsgEntry
{
    public const byte Op = 4;

    public ulong LastSeq { get; init; }

    public long Timestamp { get; init; }

    public ReadOnlySpan<byte> Subject { get; init; }

    public ReadOnlySpan<byte> Reply { get; init; }

    public ReadOnlySpan<byte> Header { get; init; }

    public ReadOnlySpan<byte> Body { get; init; }

    public static byte[] Encode(ulong lastSeq, long timestamp, string subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> header, ReadOnlySpan<byte> body)
    {
        var subjectLength = Encoding.UTF8.GetByteCount(subject);
        var bytes = new byte[1 + 8 + 8 + 2 + subjectLength + 2 + reply.Length + 2 + header.Length + 4 + body.Length];
        var span = bytes.AsSpan();
        span[0] = Op;
        BinaryPrimitives.WriteUInt64LittleEndian(span[1..], lastSeq);
        BinaryPrimitives.WriteInt64LittleEndian(span[9..], timestamp);
        var at = 17;
        BinaryPrimitives.WriteUInt16LittleEndian(span[at..], (ushort)subjectLength);
        at += 2 + Encoding.UTF8.GetBytes(subject, span[(at + 2)..]);
        at = Put16(span, at, reply);
        at = Put16(span, at, header);
        BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)body.Length);
        body.CopyTo(span[(at + 4)..]);
        return bytes;
    }

    private static int Put16(Span<byte> span, int at, ReadOnlySpan<byte> value)
    {
        BinaryPrimitives.WriteUInt16LittleEndian(span[at..], (ushort)value.Length);
        value.CopyTo(span[(at + 2)..]);
        return at + 2 + value.Length;
    }

    /// <summary>Decodes an entry; false for another op or a malformed one (never trusted: it came over the network).</summary>
    public static bool TryDecode(ReadOnlySpan<byte> data, out StreamMsgEntry entry)
    {
        entry = default;
        if (data.Length < 17 || data[0] != Op)
        {
            return false;
        }
        var at = 17;
        if (!Take16(data, ref at, out var subjectAt, out var subjectLength) || !Take16(data, ref at, out var replyAt, out var replyLength)
            || !Take16(data, ref at, out var headerAt, out var headerLength) || data.Length - at < 4)
        {
            return false;
        }
        var length = BinaryPrimitives.ReadUInt32LittleEndian(data[at..]);
        at += 4;
        if (length != (uint)(data.Length - at))
        {
            return false;
        }
        entry = new StreamMsgEntry
        {
            LastSeq = BinaryPrimitives.ReadUInt64LittleEndian(data[1..]),
            Timestamp = BinaryPrimitives.ReadInt64LittleEndian(data[9..]),
            Subject = data.Slice(subjectAt, subjectLength),
            Reply = data.Slice(replyAt, replyLength),
            Header = data.Slice(headerAt, headerLength),
            Body = data[at..],
        };
        return true;
    }

    private static bool Take16(ReadOnlySpan<byte> data, ref int at, out int start, out int length)
    {
        start = 0;
        length = 0;
        if (data.Length - at < 2)
        {
            return false;
        }
        length = BinaryPrimitives.ReadUInt16LittleEndian(data[at..]);
        at += 2;
        if (data.Length - at < length)
        {
            return false;
        }
        start = at;
        at += length;
        return true;
    }
}
