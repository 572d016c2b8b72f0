using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.InteropServices;

namespace Nats.Server.WebSocket;

/// <summary>RFC 6455 client-to-server masking: payload byte i is XORed with mask byte (i mod 4).</summary>
internal static class FrameMask
{
    /// <summary>
    /// Unmasks <paramref name="source"/> into <paramref name="destination"/> (same length), starting
    /// <paramref name="phase"/> bytes into the 4-byte mask; returns the phase after the last byte.
    /// Whole vectors at a time: a vector's width is a multiple of 4, so the mask lines up in every lane.
    /// </summary>
    public static int Apply(ReadOnlySpan<byte> source, Span<byte> destination, uint mask, int phase)
    {
        // The mask rotated so that its first byte is the one the next payload byte takes.
        var rotated = BitOperations.RotateRight(mask, phase * 8);
        var i = 0;
        if (Vector.IsHardwareAccelerated && source.Length >= Vector<byte>.Count)
        {
            var maskVector = Vector.AsVectorByte(new Vector<uint>(rotated));
            var last = source.Length - Vector<byte>.Count;
            for (; i <= last; i += Vector<byte>.Count)
            {
                var block = new Vector<byte>(source[i..]);
                (block ^ maskVector).CopyTo(destination[i..]);
            }
        }
        var wide = source.Length - 8;
        if (i <= wide)
        {
            var mask64 = ((ulong)rotated << 32) | rotated;
            for (; i <= wide; i += 8)
            {
                var value = MemoryMarshal.Read<ulong>(source[i..]) ^ mask64;
                MemoryMarshal.Write(destination[i..], in value);
            }
        }
        Span<byte> bytes = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(bytes, rotated);
        var tail = 0;
        for (; i < source.Length; i++, tail++)
        {
            destination[i] = (byte)(source[i] ^ bytes[tail & 3]);
        }
        return (phase + source.Length) & 3;
    }
}
