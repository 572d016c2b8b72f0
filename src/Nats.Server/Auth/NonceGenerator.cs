using System.Security.Cryptography;

namespace Nats.Server.Auth;

/// <summary>The INFO nonce: 11 random bytes in unpadded base64url (15 characters), as Go's generateNonce.</summary>
internal static class NonceGenerator
{
    public static string Create()
    {
        Span<byte> raw = stackalloc byte[11];
        RandomNumberGenerator.Fill(raw);
        return Convert.ToBase64String(raw).TrimEnd('=').Replace('+', '-').Replace('/', '_');
    }
}
