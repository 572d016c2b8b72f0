namespace Nats.Server.Auth;

/// <summary>
/// NATS nkey encoding: base32 (RFC 4648, no padding) of a prefix byte, the 32-byte ed25519 key and
/// a little-endian CRC-16/XMODEM of both. Seeds carry two prefix bytes ('S' plus the key type).
/// </summary>
internal static class NKeys
{
    public const byte PrefixSeed = 18 << 3;
    public const byte PrefixOperator = 14 << 3;
    public const byte PrefixServer = 13 << 3;
    public const byte PrefixCluster = 2 << 3;
    public const byte PrefixAccount = 0;
    public const byte PrefixUser = 20 << 3;

    private const string Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    /// <summary>Decodes any public nkey (user, account, server, operator, cluster) to its raw key, as nkeys.FromPublicKey.</summary>
    public static bool TryDecodePublicKey(string? encoded, out byte prefix, out byte[] key)
    {
        prefix = 0;
        key = [];
        if (!TryDecodeChecked(encoded, out var raw) || raw.Length != 1 + Ed25519.PublicKeySize)
        {
            return false;
        }
        prefix = raw[0];
        if (prefix is not (PrefixOperator or PrefixServer or PrefixCluster or PrefixAccount or PrefixUser))
        {
            return false;
        }
        key = raw[1..];
        return true;
    }

    public static bool IsValidPublicUserKey(string? encoded) =>
        TryDecodePublicKey(encoded, out var prefix, out _) && prefix == PrefixUser;

    public static bool IsValidPublicAccountKey(string? encoded) =>
        TryDecodePublicKey(encoded, out var prefix, out _) && prefix == PrefixAccount;

    /// <summary>Decodes a seed ("SU..." for a user) to its key type prefix and 32-byte ed25519 seed.</summary>
    public static bool TryDecodeSeed(string? encoded, out byte prefix, out byte[] seed)
    {
        prefix = 0;
        seed = [];
        if (!TryDecodeChecked(encoded, out var raw) || raw.Length != 2 + Ed25519.SeedSize)
        {
            return false;
        }
        if ((raw[0] & 0xF8) != PrefixSeed)
        {
            return false;
        }
        prefix = (byte)(((raw[0] & 7) << 5) | ((raw[1] & 0xF8) >> 3));
        seed = raw[2..];
        return true;
    }

    public static string EncodePublicKey(byte prefix, ReadOnlySpan<byte> key) => EncodeChecked([prefix, .. key]);

    public static string EncodeSeed(byte prefix, ReadOnlySpan<byte> seed) =>
        EncodeChecked([(byte)(PrefixSeed | (prefix >> 5)), (byte)((prefix & 31) << 3), .. seed]);

    /// <summary>CRC-16/XMODEM (polynomial 0x1021, initial 0), as in the nkeys library.</summary>
    public static ushort Crc16(ReadOnlySpan<byte> data)
    {
        ushort crc = 0;
        foreach (var b in data)
        {
            crc ^= (ushort)(b << 8);
            for (var i = 0; i < 8; i++)
            {
                crc = (crc & 0x8000) != 0 ? (ushort)((crc << 1) ^ 0x1021) : (ushort)(crc << 1);
            }
        }
        return crc;
    }

    private static bool TryDecodeChecked(string? encoded, out byte[] raw)
    {
        raw = [];
        if (string.IsNullOrEmpty(encoded) || !TryBase32Decode(encoded, out var all) || all.Length < 3)
        {
            return false;
        }
        var body = all.AsSpan(0, all.Length - 2);
        var crc = (ushort)(all[^2] | (all[^1] << 8));
        if (Crc16(body) != crc)
        {
            return false;
        }
        raw = body.ToArray();
        return true;
    }

    private static string EncodeChecked(byte[] body)
    {
        var crc = Crc16(body);
        return Base32Encode([.. body, (byte)crc, (byte)(crc >> 8)]);
    }

    private static bool TryBase32Decode(string text, out byte[] bytes)
    {
        var output = new List<byte>(text.Length * 5 / 8);
        var buffer = 0;
        var bits = 0;
        foreach (var c in text)
        {
            var value = Alphabet.IndexOf(c);
            if (value < 0)
            {
                bytes = [];
                return false;
            }
            buffer = (buffer << 5) | value;
            bits += 5;
            if (bits >= 8)
            {
                bits -= 8;
                output.Add((byte)(buffer >> bits));
                buffer &= (1 << bits) - 1;
            }
        }
        bytes = [.. output];
        return true;
    }

    private static string Base32Encode(ReadOnlySpan<byte> data)
    {
        var chars = new System.Text.StringBuilder((data.Length * 8 + 4) / 5);
        var buffer = 0;
        var bits = 0;
        foreach (var b in data)
        {
            buffer = (buffer << 8) | b;
            bits += 8;
            while (bits >= 5)
            {
                bits -= 5;
                chars.Append(Alphabet[(buffer >> bits) & 31]);
            }
            buffer &= (1 << bits) - 1;
        }
        if (bits > 0)
        {
            chars.Append(Alphabet[(buffer << (5 - bits)) & 31]);
        }
        return chars.ToString();
    }
}
