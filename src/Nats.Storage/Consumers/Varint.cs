namespace Nats.Storage.Consumers;

/// <summary>Go's encoding/binary varints (LEB128; signed values zigzag-encoded), which Go's consumer and
/// stream state encodings use.</summary>
internal static class Varint
{
    public static void Put(List<byte> buf, ulong v)
    {
        while (v >= 0x80)
        {
            buf.Add((byte)(v | 0x80));
            v >>= 7;
        }
        buf.Add((byte)v);
    }

    public static void PutSigned(List<byte> buf, long v)
    {
        var ux = (ulong)v << 1;
        if (v < 0)
        {
            ux = ~ux;
        }

        Put(buf, ux);
    }

    /// <summary>Reads at <paramref name="pos"/>; sets pos to -1 on malformed or short input.</summary>
    public static ulong Read(ReadOnlySpan<byte> buf, ref int pos)
    {
        if (pos < 0)
        {
            return 0;
        }

        ulong v = 0;
        for (var shift = 0; shift < 70; shift += 7)
        {
            if (pos >= buf.Length)
            {
                break;
            }

            var b = buf[pos++];
            v |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return v;
            }
        }
        pos = -1;
        return 0;
    }

    public static long ReadSigned(ReadOnlySpan<byte> buf, ref int pos)
    {
        var ux = Read(buf, ref pos);
        var x = (long)(ux >> 1);
        return (ux & 1) != 0 ? ~x : x;
    }
}
