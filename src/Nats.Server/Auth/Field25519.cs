using System.Buffers.Binary;

namespace Nats.Server.Auth;

/// <summary>
/// An element of GF(2^255 - 19) as five 51-bit limbs (the usual 64-bit representation): products
/// fit in 128 bits, so a multiplication is 25 widening multiplies and a carry chain, no allocation.
/// Results are kept loosely reduced (limbs below 2^52); <see cref="ToBytes"/> produces the canonical value.
/// </summary>
internal readonly struct Field25519
{
    private const ulong Mask = (1UL << 51) - 1;

    private readonly ulong _l0, _l1, _l2, _l3, _l4;

    private Field25519(ulong l0, ulong l1, ulong l2, ulong l3, ulong l4)
    {
        _l0 = l0;
        _l1 = l1;
        _l2 = l2;
        _l3 = l3;
        _l4 = l4;
    }

    public static Field25519 Zero => default;

    public static Field25519 One => new(1, 0, 0, 0, 0);

    /// <summary>Loads 32 little-endian bytes, ignoring the top bit (values up to 2^255-1 are accepted and reduced by arithmetic).</summary>
    public static Field25519 FromBytes(ReadOnlySpan<byte> bytes)
    {
        var l0 = BinaryPrimitives.ReadUInt64LittleEndian(bytes) & Mask;
        var l1 = (BinaryPrimitives.ReadUInt64LittleEndian(bytes[6..]) >> 3) & Mask;
        var l2 = (BinaryPrimitives.ReadUInt64LittleEndian(bytes[12..]) >> 6) & Mask;
        var l3 = (BinaryPrimitives.ReadUInt64LittleEndian(bytes[19..]) >> 1) & Mask;
        var l4 = (BinaryPrimitives.ReadUInt64LittleEndian(bytes[24..]) >> 12) & Mask;
        return new Field25519(l0, l1, l2, l3, l4);
    }

    /// <summary>The canonical (fully reduced) 32-byte little-endian encoding.</summary>
    public void ToBytes(Span<byte> destination)
    {
        // Three carry passes leave every limb below 2^51, which the q computation below needs.
        var t = Carry(_l0, _l1, _l2, _l3, _l4);
        t = Carry(t._l0, t._l1, t._l2, t._l3, t._l4);
        t = Carry(t._l0, t._l1, t._l2, t._l3, t._l4);
        ulong l0 = t._l0, l1 = t._l1, l2 = t._l2, l3 = t._l3, l4 = t._l4;
        // q = 1 exactly when the value is >= p; adding 19q and dropping bit 255 subtracts p.
        var q = (l0 + 19) >> 51;
        q = (l1 + q) >> 51;
        q = (l2 + q) >> 51;
        q = (l3 + q) >> 51;
        q = (l4 + q) >> 51;
        l0 += 19 * q;
        l1 += l0 >> 51;
        l0 &= Mask;
        l2 += l1 >> 51;
        l1 &= Mask;
        l3 += l2 >> 51;
        l2 &= Mask;
        l4 += l3 >> 51;
        l3 &= Mask;
        l4 &= Mask;
        BinaryPrimitives.WriteUInt64LittleEndian(destination, l0 | (l1 << 51));
        BinaryPrimitives.WriteUInt64LittleEndian(destination[8..], (l1 >> 13) | (l2 << 38));
        BinaryPrimitives.WriteUInt64LittleEndian(destination[16..], (l2 >> 26) | (l3 << 25));
        BinaryPrimitives.WriteUInt64LittleEndian(destination[24..], (l3 >> 39) | (l4 << 12));
    }

    public bool IsZero
    {
        get
        {
            Span<byte> bytes = stackalloc byte[32];
            ToBytes(bytes);
            return bytes.IndexOfAnyExcept((byte)0) < 0;
        }
    }

    public bool IsOdd
    {
        get
        {
            Span<byte> bytes = stackalloc byte[32];
            ToBytes(bytes);
            return (bytes[0] & 1) != 0;
        }
    }

    public static Field25519 operator +(Field25519 a, Field25519 b) =>
        Carry(a._l0 + b._l0, a._l1 + b._l1, a._l2 + b._l2, a._l3 + b._l3, a._l4 + b._l4);

    // Adds 2p before subtracting so no limb underflows (inputs are below 2^52).
    public static Field25519 operator -(Field25519 a, Field25519 b) =>
        Carry(a._l0 + 0xFFFFFFFFFFFDA - b._l0, a._l1 + 0xFFFFFFFFFFFFE - b._l1, a._l2 + 0xFFFFFFFFFFFFE - b._l2,
            a._l3 + 0xFFFFFFFFFFFFE - b._l3, a._l4 + 0xFFFFFFFFFFFFE - b._l4);

    public static Field25519 operator -(Field25519 a) => Zero - a;

    public static Field25519 operator *(Field25519 a, Field25519 b)
    {
        ulong a0 = a._l0, a1 = a._l1, a2 = a._l2, a3 = a._l3, a4 = a._l4;
        ulong b0 = b._l0, b1 = b._l1, b2 = b._l2, b3 = b._l3, b4 = b._l4;
        // Limbs above 2^255 wrap around multiplied by 19.
        ulong b1x = b1 * 19, b2x = b2 * 19, b3x = b3 * 19, b4x = b4 * 19;
        var r0 = Mul(a0, b0) + Mul(a1, b4x) + Mul(a2, b3x) + Mul(a3, b2x) + Mul(a4, b1x);
        var r1 = Mul(a0, b1) + Mul(a1, b0) + Mul(a2, b4x) + Mul(a3, b3x) + Mul(a4, b2x);
        var r2 = Mul(a0, b2) + Mul(a1, b1) + Mul(a2, b0) + Mul(a3, b4x) + Mul(a4, b3x);
        var r3 = Mul(a0, b3) + Mul(a1, b2) + Mul(a2, b1) + Mul(a3, b0) + Mul(a4, b4x);
        var r4 = Mul(a0, b4) + Mul(a1, b3) + Mul(a2, b2) + Mul(a3, b1) + Mul(a4, b0);
        r1 += (ulong)(r0 >> 51);
        var l0 = (ulong)r0 & Mask;
        r2 += (ulong)(r1 >> 51);
        var l1 = (ulong)r1 & Mask;
        r3 += (ulong)(r2 >> 51);
        var l2 = (ulong)r2 & Mask;
        r4 += (ulong)(r3 >> 51);
        var l3 = (ulong)r3 & Mask;
        var c = (ulong)(r4 >> 51);
        var l4 = (ulong)r4 & Mask;
        l0 += c * 19;
        l1 += l0 >> 51;
        l0 &= Mask;
        return new Field25519(l0, l1, l2, l3, l4);
    }

    public Field25519 Square() => this * this;

    /// <summary>this^exponent, the exponent given as little-endian bytes.</summary>
    public Field25519 Pow(ReadOnlySpan<byte> exponent)
    {
        var result = One;
        for (var bit = exponent.Length * 8 - 1; bit >= 0; bit--)
        {
            result = result.Square();
            if (((exponent[bit >> 3] >> (bit & 7)) & 1) != 0)
            {
                result *= this;
            }
        }
        return result;
    }

    private static UInt128 Mul(ulong a, ulong b)
    {
        var high = Math.BigMul(a, b, out var low);
        return new UInt128(high, low);
    }

    private static Field25519 Carry(ulong l0, ulong l1, ulong l2, ulong l3, ulong l4)
    {
        l1 += l0 >> 51;
        l0 &= Mask;
        l2 += l1 >> 51;
        l1 &= Mask;
        l3 += l2 >> 51;
        l2 &= Mask;
        l4 += l3 >> 51;
        l3 &= Mask;
        l0 += (l4 >> 51) * 19;
        l4 &= Mask;
        return new Field25519(l0, l1, l2, l3, l4);
    }
}
