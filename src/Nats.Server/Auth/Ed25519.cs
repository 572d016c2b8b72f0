using System.Numerics;
using System.Security.Cryptography;

namespace Nats.Server.Auth;

/// <summary>
/// Ed25519 (RFC 8032) over BigInteger field arithmetic: verification for nkey challenges, and signing
/// so tests and tools can act as nkey clients. The BCL has no Ed25519 and no managed package is
/// available; this runs once per connection handshake, where a few milliseconds are acceptable.
/// Verification follows Go's crypto/ed25519: canonical S required, the top three bits of the
/// signature's last byte must be clear, and the recomputed R is compared byte for byte.
/// </summary>
internal static class Ed25519
{
    public const int PublicKeySize = 32;
    public const int SignatureSize = 64;
    public const int SeedSize = 32;

    private static readonly BigInteger P = BigInteger.Pow(2, 255) - 19;
    private static readonly BigInteger L = BigInteger.Pow(2, 252) + BigInteger.Parse("27742317777372353535851937790883648493");
    private static readonly BigInteger D = Mod(-121665 * Inverse(121666));
    private static readonly BigInteger D2 = Mod(2 * D);
    private static readonly BigInteger SqrtMinusOne = BigInteger.ModPow(2, (P - 1) / 4, P);
    private static readonly Point Base = BasePoint();
    private static readonly Point Identity = new(0, 1, 1, 0);

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
        var minusA = new Point(Mod(-a.X), a.Y, a.Z, Mod(-a.T));
        var r = Add(Multiply(Base, s), Multiply(minusA, k));
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
        Span<byte> copy = stackalloc byte[32];
        encoded.CopyTo(copy);
        var sign = copy[31] >> 7;
        copy[31] &= 0x7F;
        // Like Go's edwards25519, non-canonical y encodings (y >= p) are reduced rather than refused.
        var y = Mod(FromLittleEndian(copy));
        var y2 = y * y % P;
        var x2 = Mod((y2 - 1) * Inverse(Mod(D * y2 + 1)));
        var x = BigInteger.ModPow(x2, (P + 3) / 8, P);
        if (Mod(x * x - x2) != 0)
        {
            x = x * SqrtMinusOne % P;
            if (Mod(x * x - x2) != 0)
            {
                return false;
            }
        }
        if ((int)(x & 1) != sign)
        {
            x = Mod(-x);
        }
        point = new Point(x, y, 1, x * y % P);
        return true;
    }

    private static void Encode(Point point, Span<byte> destination)
    {
        var zInverse = Inverse(point.Z);
        var x = point.X * zInverse % P;
        var y = point.Y * zInverse % P;
        ToLittleEndian(y, destination);
        destination[31] |= (byte)((int)(x & 1) << 7);
    }

    private static Point Multiply(Point point, BigInteger scalar)
    {
        var result = Identity;
        for (var bit = (int)scalar.GetBitLength() - 1; bit >= 0; bit--)
        {
            result = Add(result, result);
            if (!(scalar >> bit).IsEven)
            {
                result = Add(result, point);
            }
        }
        return result;
    }

    // Unified addition in extended coordinates (RFC 8032 section 5.1.4); also used for doubling.
    private static Point Add(Point p, Point q)
    {
        var a = Mod((p.Y - p.X) * (q.Y - q.X));
        var b = (p.Y + p.X) * (q.Y + q.X) % P;
        var c = p.T * D2 % P * q.T % P;
        var d = 2 * p.Z * q.Z % P;
        var e = Mod(b - a);
        var f = Mod(d - c);
        var g = (d + c) % P;
        var h = (b + a) % P;
        return new Point(e * f % P, g * h % P, f * g % P, e * h % P);
    }

    private static Point BasePoint()
    {
        var y = Mod(4 * Inverse(5));
        Span<byte> encoded = stackalloc byte[32];
        ToLittleEndian(y, encoded);
        TryDecode(encoded, out var point);
        return point;
    }

    private static BigInteger Mod(BigInteger value) => Mod(value, P);

    private static BigInteger Mod(BigInteger value, BigInteger modulus)
    {
        var r = value % modulus;
        return r.Sign < 0 ? r + modulus : r;
    }

    private static BigInteger Inverse(BigInteger value) => BigInteger.ModPow(Mod(value), P - 2, P);

    private static BigInteger FromLittleEndian(ReadOnlySpan<byte> bytes) => new(bytes, isUnsigned: true, isBigEndian: false);

    private static void ToLittleEndian(BigInteger value, Span<byte> destination)
    {
        destination.Clear();
        value.TryWriteBytes(destination, out _, isUnsigned: true, isBigEndian: false);
    }

    private readonly record struct Point(BigInteger X, BigInteger Y, BigInteger Z, BigInteger T);
}
