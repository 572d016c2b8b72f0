using System.Security.Cryptography;
using NATS.NKeys;

namespace Nats.Server.Tests.Auth;

/// <summary>
/// An nkey pair from a fixed 32-byte ed25519 seed: NATS.NKeys draws the seed from the generator it is
/// given, so known vectors (RFC 8032, fixed test seeds) stay reproducible.
/// </summary>
internal static class SeededKeyPair
{
    public static KeyPair Create(byte[] seed, PrefixByte prefix = PrefixByte.User) => KeyPair.CreatePair(prefix, new FixedBytes(seed));

    /// <summary>The nonce signature a client puts in CONNECT "sig": raw URL base64.</summary>
    public static string SignNonce(KeyPair key, string nonce) =>
        Convert.ToBase64String(Sign(key, System.Text.Encoding.ASCII.GetBytes(nonce))).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    public static byte[] Sign(KeyPair key, byte[] message)
    {
        var signature = new byte[64];
        key.Sign(message, signature);
        return signature;
    }

    private sealed class FixedBytes(byte[] bytes) : RandomNumberGenerator
    {
        public override void GetBytes(byte[] data)
        {
            if (data.Length != bytes.Length)
            {
                throw new InvalidOperationException($"asked for {data.Length} bytes, seed has {bytes.Length}");
            }
            bytes.CopyTo(data, 0);
        }
    }
}
