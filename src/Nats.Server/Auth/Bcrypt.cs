using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;

namespace Nats.Server.Auth;

/// <summary>
/// bcrypt password hashes ($2a$/$2b$/$2x$/$2y$), checked like golang.org/x/crypto/bcrypt as the Go
/// server uses it: the key is the password plus a NUL, only its first 72 bytes take part, the salt is
/// the 22 characters after the cost and the remaining 31 characters must equal the computed hash.
/// No NuGet package is available, so the Eksblowfish setup is implemented here.
/// </summary>
internal static class Bcrypt
{
    private const string Alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private const int SaltChars = 22;
    private const int HashChars = 31;
    private const int MinHashLength = 59;
    private static readonly byte[] MagicText = "OrpheanBeholderScryDoubt"u8.ToArray();

    /// <summary>Go's isBcrypt: "$2" then a, b, x or y, "$", two digits, "$".</summary>
    public static bool IsBcryptHash(string? value) =>
        value is { Length: >= 7 } && value[0] == '$' && value[1] == '2' && value[2] is 'a' or 'b' or 'x' or 'y'
        && value[3] == '$' && char.IsAsciiDigit(value[4]) && char.IsAsciiDigit(value[5]) && value[6] == '$';

    public static bool Verify(string password, string hash)
    {
        if (hash.Length < MinHashLength || hash[0] != '$' || hash[1] > '2')
        {
            return false;
        }
        var position = hash[2] == '$' ? 3 : 4;
        if (!int.TryParse(hash.AsSpan(position, 2), System.Globalization.NumberStyles.None, null, out var cost) || cost is < 4 or > 31)
        {
            return false;
        }
        position += 3;
        var saltText = hash.Substring(position, SaltChars);
        var expected = hash[(position + SaltChars)..];
        if (!TryDecodeSalt(saltText, out var salt))
        {
            return false;
        }
        var actual = ComputeHashText(Encoding.UTF8.GetBytes(password), cost, salt);
        return CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(actual), Encoding.ASCII.GetBytes(expected));
    }

    /// <summary>Produces a "$2a$" hash (for tests and tooling).</summary>
    public static string Hash(string password, int cost, ReadOnlySpan<byte> salt)
    {
        if (salt.Length != 16)
        {
            throw new ArgumentException("bcrypt salt is 16 bytes", nameof(salt));
        }
        var saltText = Encode(salt)[..SaltChars];
        return $"$2a${cost:D2}${saltText}{ComputeHashText(Encoding.UTF8.GetBytes(password), cost, salt.ToArray())}";
    }

    private static string ComputeHashText(byte[] password, int cost, byte[] salt)
    {
        var key = new byte[password.Length + 1];
        password.CopyTo(key, 0);
        var state = Blowfish.CreateInitial();
        state.ExpandKey(key, salt);
        var rounds = 1L << cost;
        for (long i = 0; i < rounds; i++)
        {
            state.ExpandKey(key, null);
            state.ExpandKey(salt, null);
        }
        Span<uint> words = stackalloc uint[6];
        for (var i = 0; i < 6; i++)
        {
            words[i] = BinaryPrimitives.ReadUInt32BigEndian(MagicText.AsSpan(i * 4));
        }
        for (var i = 0; i < 64; i++)
        {
            for (var j = 0; j < 6; j += 2)
            {
                state.Encrypt(ref words[j], ref words[j + 1]);
            }
        }
        Span<byte> output = stackalloc byte[24];
        for (var i = 0; i < 6; i++)
        {
            BinaryPrimitives.WriteUInt32BigEndian(output[(i * 4)..], words[i]);
        }
        return Encode(output[..23])[..HashChars];
    }

    private static string Encode(ReadOnlySpan<byte> data)
    {
        var sb = new StringBuilder((data.Length * 4 + 2) / 3);
        for (var i = 0; i < data.Length; i += 3)
        {
            var chunk = data[i] << 16;
            if (i + 1 < data.Length)
            {
                chunk |= data[i + 1] << 8;
            }
            if (i + 2 < data.Length)
            {
                chunk |= data[i + 2];
            }
            var chars = i + 2 < data.Length ? 4 : i + 1 < data.Length ? 3 : 2;
            for (var c = 0; c < chars; c++)
            {
                sb.Append(Alphabet[(chunk >> (18 - 6 * c)) & 63]);
            }
        }
        return sb.ToString();
    }

    /// <summary>22 characters give 132 bits; the 16 salt bytes are the first 128 (extra bits ignored, as Go does).</summary>
    private static bool TryDecodeSalt(string text, out byte[] salt)
    {
        salt = new byte[16];
        var bits = 0;
        var buffer = 0;
        var index = 0;
        foreach (var c in text)
        {
            var value = Alphabet.IndexOf(c);
            if (value < 0)
            {
                return false;
            }
            buffer = (buffer << 6) | value;
            bits += 6;
            if (bits >= 8)
            {
                bits -= 8;
                if (index < salt.Length)
                {
                    salt[index++] = (byte)(buffer >> bits);
                }
                buffer &= (1 << bits) - 1;
            }
        }
        return index == salt.Length;
    }

    /// <summary>Blowfish with the Eksblowfish key schedule (key and salt words cycled over).</summary>
    private sealed class Blowfish
    {
        private readonly uint[] _p = new uint[18];
        private readonly uint[] _s = new uint[1024];

        public static Blowfish CreateInitial()
        {
            var state = new Blowfish();
            var digits = PiDigits.Words;
            digits.AsSpan(0, 18).CopyTo(state._p);
            digits.AsSpan(18, 1024).CopyTo(state._s);
            return state;
        }

        public void ExpandKey(byte[] key, byte[]? salt)
        {
            var keyPosition = 0;
            for (var i = 0; i < 18; i++)
            {
                _p[i] ^= NextWord(key, ref keyPosition);
            }
            uint left = 0;
            uint right = 0;
            var saltPosition = 0;
            for (var i = 0; i < 18; i += 2)
            {
                if (salt is not null)
                {
                    left ^= NextWord(salt, ref saltPosition);
                    right ^= NextWord(salt, ref saltPosition);
                }
                Encrypt(ref left, ref right);
                _p[i] = left;
                _p[i + 1] = right;
            }
            for (var i = 0; i < 1024; i += 2)
            {
                if (salt is not null)
                {
                    left ^= NextWord(salt, ref saltPosition);
                    right ^= NextWord(salt, ref saltPosition);
                }
                Encrypt(ref left, ref right);
                _s[i] = left;
                _s[i + 1] = right;
            }
        }

        public void Encrypt(ref uint left, ref uint right)
        {
            // The Eksblowfish loop runs this 2^cost * 1042 times: index without bounds checks
            // (every index is a byte plus a fixed offset, always inside the 1024-entry table).
            ref var p = ref MemoryMarshal.GetArrayDataReference(_p);
            ref var s = ref MemoryMarshal.GetArrayDataReference(_s);
            var l = left ^ p;
            var r = right;
            for (var i = 1; i <= 16; i += 2)
            {
                r ^= F(ref s, l) ^ Unsafe.Add(ref p, i);
                l ^= F(ref s, r) ^ Unsafe.Add(ref p, i + 1);
            }
            left = r ^ Unsafe.Add(ref p, 17);
            right = l;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static uint F(ref uint s, uint x) =>
            ((Unsafe.Add(ref s, (int)(x >> 24)) + Unsafe.Add(ref s, 256 + (int)((x >> 16) & 0xFF)))
                ^ Unsafe.Add(ref s, 512 + (int)((x >> 8) & 0xFF))) + Unsafe.Add(ref s, 768 + (int)(x & 0xFF));

        private static uint NextWord(byte[] data, ref int position)
        {
            uint word = 0;
            for (var i = 0; i < 4; i++)
            {
                word = (word << 8) | data[position];
                position = (position + 1) % data.Length;
            }
            return word;
        }
    }

    /// <summary>
    /// Blowfish's initial P-array and S-boxes are the hexadecimal digits of pi's fractional part.
    /// They are computed once (Machin's formula in fixed point) instead of being pasted as a table.
    /// </summary>
    private static class PiDigits
    {
        private const int WordCount = 18 + 1024;
        private static readonly Lazy<uint[]> Lazy = new(Compute);

        public static uint[] Words => Lazy.Value;

        private static uint[] Compute()
        {
            var bits = WordCount * 32 + 64;
            var one = BigInteger.One << bits;
            var pi = 16 * ArcTanInverse(5, one) - 4 * ArcTanInverse(239, one);
            var fraction = pi - 3 * one;
            var words = new uint[WordCount];
            for (var i = 0; i < WordCount; i++)
            {
                words[i] = (uint)((fraction >> (bits - 32 * (i + 1))) & uint.MaxValue);
            }
            return words;
        }

        // arctan(1/x) scaled by "one", from its alternating series.
        private static BigInteger ArcTanInverse(int x, BigInteger one)
        {
            var power = one / x;
            var sum = power;
            var x2 = x * x;
            var sign = -1;
            for (var n = 3; !power.IsZero; n += 2)
            {
                power /= x2;
                sum += sign * (power / n);
                sign = -sign;
            }
            return sum;
        }
    }
}
