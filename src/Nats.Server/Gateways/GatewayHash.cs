using System.Security.Cryptography;
using System.Text;

namespace Nats.Server.Gateways;

/// <summary>Go's getHashSize: the first <c>size</c> bytes of SHA-256(name), each mod 62 through 0-9A-Za-z. The 6-character
/// form names a gateway (its cluster) and a server in <c>_GR_.&lt;cluster&gt;.&lt;server&gt;.</c> reply subjects.</summary>
internal static class GatewayHash
{
    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    public const int Length = 6;

    public static byte[] Of(string name)
    {
        var sha = SHA256.HashData(Encoding.UTF8.GetBytes(name));
        var hash = new byte[Length];
        for (var i = 0; i < Length; i++)
        {
            hash[i] = (byte)Digits[sha[i] % Digits.Length];
        }
        return hash;
    }
}
