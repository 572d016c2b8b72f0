using System.Text;
using Org.BouncyCastle.Crypto.Digests;

namespace Nats.Server.Hosting;

/// <summary>
/// Go's getHash: the first 8 bytes of the SHA-256 of a name, each taken modulo 62 into [0-9A-Za-z]. Names this
/// server in system-account inbox and latency subjects and in MQTT's JetStream records.
/// </summary>
/// <remarks>
/// SHA-256 comes from BouncyCastle's managed digest rather than System.Security.Cryptography: on Linux the
/// latter is OpenSSL, and this hash is computed at every startup (the system account's subscriptions), so it
/// alone mapped libcrypto and libssl (3.7 MB resident) into a server that has no TLS configured. This is an
/// identifier, not a security boundary, and runs once per name.
/// </remarks>
internal static class NameHash
{
    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    public static string Of(string name)
    {
        var input = Encoding.UTF8.GetBytes(name);
        var digest = new Sha256Digest();
        digest.BlockUpdate(input, 0, input.Length);
        Span<byte> sha = stackalloc byte[32];
        digest.DoFinal(sha);
        Span<char> hash = stackalloc char[8];
        for (var i = 0; i < hash.Length; i++)
        {
            hash[i] = Digits[sha[i] % Digits.Length];
        }
        return new string(hash);
    }
}
