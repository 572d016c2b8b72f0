using System.Numerics;
using System.Security.Cryptography;

namespace Nats.Server.Auth;

/// <summary>
/// Ed25519 (RFC 8032): verification for nkey challenges, and signing so tests and tools can act as
/// nkey clients. The BCL has no Ed25519 and no managed package is available, so it is implemented
/// here: field arithmetic in <see cref="Field25519"/>, points in extended coordinates, scalars mod L
/// with BigInteger (a handful of operations per signature). Verification follows Go's crypto/ed25519:
/// canonical S required, the top three bits of the signature's last byte must be clear, non-canonical
/// point encodings are reduced rather than refused, and the recomputed R is compared byte for byte.
/// Not constant time: it verifies public data; signing is for tests and tools only.
/// </summary>
internal static class Ed25519
{
    public const int PublicKeySize = 32;
    public const int SignatureSize = 64;
    public const int SeedSize = 32;

    private static readonly BigInteger P = BigInteger.Pow(2, 255) - 19;
    private static readonly BigInteger L = BigInteger.Pow(2, 252) + BigInteger.Parse("27742317777372353535851937790883648493");
    private static readonly Field25519 D = FieldFrom(Mod(-121665 * BigInteger.ModPow(121666, P - 2, P), P));
    private static readonly Field25519 D2 = D + D;
    private static readonly Field25519 SqrtMinusOne = FieldFrom(BigInteger.ModPow(2, (P - 1) / 4, P));
    private static readonly byte[] InverseExponent = ExponentBytes(P - 2);
    private static readonly byte[] SqrtRatioExponent = ExponentBytes((P - 5) / 8);
    private static readonly Point Identity = new(Field25519.Zero, Field25519.One, Field25519.One, Field25519.Zero);
    private static readonly Point Base = BasePoint();

    public static bool Verify(ReadOnlySpan<byte> publicKey, ReadOnlySpan<byte> message, ReadOnlySpan<byte> signature)
    {
        if (publicKey.Length != PublicKeySize || signature.Length != SignatureSize || (signature[63] & 0xE0) != 0)
        {
            return false;
        }
        if (!TryDecode(publicKey, out var a))
        {
            return false;
        }
        var s = FromLittleEndian(signature[32..]);
        if (s >= L)
        {
            return false;
        }
        var k = HashToScalar(signature[..32], publicKey, message);
        var minusA = new Point(-a.X, a.Y, a.Z, -a.T);
        var r = DoubleMultiply(s, Base, k, minusA);
        Span<byte> encoded = stackalloc byte[32];
        Encode(r, encoded);
        return encoded.SequenceEqual(signature[..32]);
    }

    /// <summary>The public key of a 32-byte seed.</summary>
    public static byte[] PublicKeyFromSeed(ReadOnlySpan<byte> seed)
    {
        var (scalar, _) = ExpandSeed(seed);
        var publicKey = new byte[32];
        Encode(Multiply(Base, scalar), publicKey);
        return publicKey;
    }

    public static byte[] Sign(ReadOnlySpan<byte> seed, ReadOnlySpan<byte> message)
    {
        var (scalar, prefix) = ExpandSeed(seed);
        var publicKey = new byte[32];
        Encode(Multiply(Base, scalar), publicKey);
        var r = Mod(FromLittleEndian(SHA512.HashData([.. prefix, .. message])), L);
        var signature = new byte[64];
        Encode(Multiply(Base, r), signature.AsSpan(0, 32));
        var k = HashToScalar(signature.AsSpan(0, 32), publicKey, message);
        var s = Mod(r + k * scalar, L);
        ToLittleEndian(s, signature.AsSpan(32, 32));
        return signature;
    }

    private static (BigInteger Scalar, byte[] Prefix) ExpandSeed(ReadOnlySpan<byte> seed)
    {
        if (seed.Length != SeedSize)
        {
            throw new ArgumentException("an Ed25519 seed is 32 bytes", nameof(seed));
        }
        var h = SHA512.HashData(seed);
        h[0] &= 248;
        h[31] &= 127;
        h[31] |= 64;
        return (FromLittleEndian(h.AsSpan(0, 32)), h[32..]);
    }

    private static BigInteger HashToScalar(ReadOnlySpan<byte> r, ReadOnlySpan<byte> publicKey, ReadOnlySpan<byte> message)
    {
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA512);
        sha.AppendData(r);
        sha.AppendData(publicKey);
        sha.AppendData(message);
        return Mod(FromLittleEndian(sha.GetHashAndReset()), L);
    }

    private static bool TryDecode(ReadOnlySpan<byte> encoded, out Point point)
    {
        point = Identity;
        var sign = encoded[31] >> 7;
        var y = Field25519.FromBytes(encoded);
        var y2 = y.Square();
        var u = y2 - Field25519.One;
        var v = D * y2 + Field25519.One;
        // RFC 8032 5.1.3: x = u v^3 (u v^7)^((p-5)/8) finds sqrt(u/v) with one exponentiation.
        var v3 = v.Square() * v;
        var x = u * v3 * (u * v3.Square() * v).Pow(SqrtRatioExponent);
        var vx2 = v * x.Square();
        if (!(vx2 - u).IsZero)
        {
            if (!(vx2 + u).IsZero)
            {
                return false;
            }
            x *= SqrtMinusOne;
        }
        if ((x.IsOdd ? 1 : 0) != sign)
        {
            x = -x;
        }
        point = new Point(x, y, Field25519.One, x * y);
        return true;
    }

    private static void Encode(Point point, Span<byte> destination)
    {
        var zInverse = point.Z.Pow(InverseExponent);
        var x = point.X * zInverse;
        var y = point.Y * zInverse;
        y.ToBytes(destination);
        if (x.IsOdd)
        {
            destination[31] |= 0x80;
        }
    }

    private static Point Multiply(Point point, BigInteger scalar) => DoubleMultiply(scalar, point, BigInteger.Zero, Identity);

    /// <summary>[a]P + [b]Q with one shared doubling chain (Straus/Shamir).</summary>
    private static Point DoubleMultiply(BigInteger a, Point p, BigInteger b, Point q)
    {
        var sum = Add(p, q);
        var bits = (int)Math.Max(a.GetBitLength(), b.GetBitLength());
        Span<byte> aBytes = stackalloc byte[33];
        Span<byte> bBytes = stackalloc byte[33];
        ToLittleEndian(a, aBytes);
        ToLittleEndian(b, bBytes);
        var result = Identity;
        for (var bit = bits - 1; bit >= 0; bit--)
        {
            result = Add(result, result);
            var aBit = (aBytes[bit >> 3] >> (bit & 7)) & 1;
            var bBit = (bBytes[bit >> 3] >> (bit & 7)) & 1;
            if (aBit != 0 && bBit != 0)
            {
                result = Add(result, sum);
            }
            else if (aBit != 0)
            {
                result = Add(result, p);
            }
            else if (bBit != 0)
            {
                result = Add(result, q);
            }
        }
        return result;
    }

    // Unified addition in extended coordinates (RFC 8032 section 5.1.4); also used for doubling.
    private static Point Add(Point p, Point q)
    {
        var a = (p.Y - p.X) * (q.Y - q.X);
        var b = (p.Y + p.X) * (q.Y + q.X);
        var c = p.T * D2 * q.T;
        var zz = p.Z * q.Z;
        var d = zz + zz;
        var e = b - a;
        var f = d - c;
        var g = d + c;
        var h = b + a;
        return new Point(e * f, g * h, f * g, e * h);
    }

    private static Point BasePoint()
    {
        var y = Mod(4 * BigInteger.ModPow(5, P - 2, P), P);
        Span<byte> encoded = stackalloc byte[32];
        ToLittleEndian(y, encoded);
        TryDecode(encoded, out var point);
        return point;
    }

    private static Field25519 FieldFrom(BigInteger value)
    {
        Span<byte> bytes = stackalloc byte[32];
        ToLittleEndian(value, bytes);
        return Field25519.FromBytes(bytes);
    }

    private static byte[] ExponentBytes(BigInteger exponent)
    {
        var bytes = new byte[32];
        ToLittleEndian(exponent, bytes);
        return bytes;
    }

    private static BigInteger Mod(BigInteger value, BigInteger modulus)
    {
        var r = value % modulus;
        return r.Sign < 0 ? r + modulus : r;
    }

    private static BigInteger FromLittleEndian(ReadOnlySpan<byte> bytes) => new(bytes, isUnsigned: true, isBigEndian: false);

    private static void ToLittleEndian(BigInteger value, Span<byte> destination)
    {
        destination.Clear();
        value.TryWriteBytes(destination, out _, isUnsigned: true, isBigEndian: false);
    }

    private readonly record struct Point(Field25519 X, Field25519 Y, Field25519 Z, Field25519 T);
}
