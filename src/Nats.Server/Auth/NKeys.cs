using NATS.NKeys;

namespace Nats.Server.Auth;

/// <summary>
/// Public nkeys and nonce signatures through the NATS project's own NATS.NKeys package, plus the one
/// rule of Go's crypto/ed25519 the package does not apply: the signature scalar S must be canonical
/// (below the group order L). Without it a second encoding of the same signature would log in here
/// and be refused by the Go server.
/// </summary>
internal static class NKeys
{
    private const int SignatureSize = 64;

    /// <summary>The ed25519 group order L = 2^252 + 27742317777372353535851937790883648493, little endian.</summary>
    private static ReadOnlySpan<byte> GroupOrder =>
    [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];

    public static bool IsValidPublicUserKey(string? encoded) => PrefixOf(encoded) == PrefixByte.User;

    public static bool IsValidPublicAccountKey(string? encoded) => PrefixOf(encoded) == PrefixByte.Account;

    /// <summary>Whether <paramref name="signature"/> is the ed25519 signature of <paramref name="message"/> by the public nkey.</summary>
    public static bool Verify(string? publicKey, byte[] message, byte[] signature)
    {
        if (signature.Length != SignatureSize || !IsCanonicalScalar(signature.AsSpan(32)) || !TryDecode(publicKey, out var key))
        {
            return false;
        }
        using (key)
        {
            return key.Verify(message, signature);
        }
    }

    public static bool IsValidPublicOperatorKey(string? encoded) => PrefixOf(encoded) == PrefixByte.Operator;

    public static PrefixByte? PrefixOf(string? encoded)
    {
        if (!TryDecode(encoded, out var key))
        {
            return null;
        }
        using (key)
        {
            return key.Prefix;
        }
    }

    private static bool TryDecode(string? encoded, out KeyPair key)
    {
        key = null!;
        // The package indexes into an empty key rather than refusing it.
        if (string.IsNullOrEmpty(encoded))
        {
            return false;
        }
        try
        {
            key = KeyPair.FromPublicKey(encoded);
            return true;
        }
        // Bad CRC, bad base32, a seed or unknown prefix: the package throws, a login just fails.
        catch (Exception e) when (e is NKeysException or ArgumentException or FormatException)
        {
            return false;
        }
    }

    private static bool IsCanonicalScalar(ReadOnlySpan<byte> s)
    {
        for (var i = 31; i >= 0; i--)
        {
            if (s[i] != GroupOrder[i])
            {
                return s[i] < GroupOrder[i];
            }
        }
        return false;
    }
}
