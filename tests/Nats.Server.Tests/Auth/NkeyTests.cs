using System.Text;
using Nats.Server.Auth;
using NATS.NKeys;

namespace Nats.Server.Tests.Auth;

/// <summary>Vectors from the nats.js nkeys library (@nats-io/nkeys 2.0.3) and RFC 8032, through NATS.NKeys and our checks.</summary>
public sealed class NkeyTests
{
    private const string Seed = "SUADI37IG7T4RJFKKSPJ7566JGBFMZV6H37EJWM4WUBHCP56BNM7Z7JNCM";
    private const string Public = "UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAR";
    private const string Nonce = "abcdefghijklmno";
    private const string Signature = "pK5YwOXzUe-fr-Jwqq01hpwhjH_F87gac5A8Woz6jr3uu7hE4W32neovNLYH8pfDYoQ9tf5bFoWXE7IQNsKwDw";

    /// <summary>L, the ed25519 group order: adding it to S gives a second, non-canonical encoding.</summary>
    private static readonly System.Numerics.BigInteger L =
        System.Numerics.BigInteger.Pow(2, 252) + System.Numerics.BigInteger.Parse("27742317777372353535851937790883648493");

    [Fact]
    public void Verifies_a_nats_js_signature()
    {
        Assert.True(NKeys.IsValidPublicUserKey(Public));
        var sig = Convert.FromBase64String(Signature.Replace('-', '+').Replace('_', '/') + "==");
        Assert.True(NKeys.Verify(Public, Encoding.ASCII.GetBytes(Nonce), sig));
        Assert.False(NKeys.Verify(Public, Encoding.ASCII.GetBytes(Nonce + "x"), sig));
        sig[5] ^= 1;
        Assert.False(NKeys.Verify(Public, Encoding.ASCII.GetBytes(Nonce), sig));
    }

    [Fact]
    public void Seed_derives_the_public_key_and_signs_like_nats_js()
    {
        using var pair = KeyPair.FromSeed(Seed);
        Assert.Equal(PrefixByte.User, pair.Prefix);
        Assert.Equal(Public, pair.GetPublicKey());
        Assert.Equal(Seed, pair.GetSeed());
        Assert.Equal(Signature, SeededKeyPair.SignNonce(pair, Nonce));
    }

    [Fact]
    public void Rfc8032_test_vector_1()
    {
        var seed = Convert.FromHexString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        var publicKey = Convert.FromHexString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        var sig = Convert.FromHexString("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        using var pair = SeededKeyPair.Create(seed);
        var encoded = pair.GetPublicKey();
        var raw = new byte[Base32.GetDataLength(encoded)];
        Base32.FromBase32(encoded, raw);
        Assert.Equal(publicKey, raw[1..33]);
        Assert.Equal(sig, SeededKeyPair.Sign(pair, []));
        Assert.True(NKeys.Verify(encoded, [], sig));
    }

    [Fact]
    public void Signature_with_high_bits_non_canonical_s_or_wrong_length_is_refused()
    {
        using var pair = KeyPair.FromSeed(Seed);
        var sig = SeededKeyPair.Sign(pair, "m"u8.ToArray());
        Assert.True(NKeys.Verify(Public, "m"u8.ToArray(), sig));
        var high = (byte[])sig.Clone();
        high[63] |= 0x80;
        Assert.False(NKeys.Verify(Public, "m"u8.ToArray(), high));
        Assert.False(NKeys.Verify(Public, "m"u8.ToArray(), sig[..63]));
        Assert.False(NKeys.Verify(Public, "m"u8.ToArray(), [.. sig, 0]));
    }

    [Fact]
    public void Non_canonical_s_is_refused_like_go_crypto_ed25519()
    {
        // Find a signature whose S + L still fits under the top-three-bits rule, which is all the
        // package checks; Go's crypto/ed25519 refuses it, and so must we.
        using var pair = KeyPair.FromSeed(Seed);
        for (var i = 0; i < 64; i++)
        {
            byte[] message = [(byte)i];
            var sig = SeededKeyPair.Sign(pair, message);
            var shifted = (new System.Numerics.BigInteger(sig.AsSpan(32), isUnsigned: true) + L).ToByteArray(isUnsigned: true);
            if (shifted.Length > 32 || (shifted.Length == 32 && (shifted[31] & 0xE0) != 0))
            {
                continue;
            }
            var alias = (byte[])sig.Clone();
            Array.Clear(alias, 32, 32);
            shifted.CopyTo(alias, 32);
            Assert.True(pair.Verify(message, alias), "the package accepts the alias: the check here is what refuses it");
            Assert.True(NKeys.Verify(Public, message, sig));
            Assert.False(NKeys.Verify(Public, message, alias));
            return;
        }
        Assert.Fail("no signature with a small enough S in 64 tries");
    }

    [Theory]
    [InlineData("UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAS")] // CRC mismatch
    [InlineData("UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVA")] // truncated
    [InlineData("ud7gdmlp62qes2bsxths32tukqciyquny6wsf4wxfyczevttaqcmjvar")] // lower case is not base32 here
    [InlineData(Seed)] // a seed is not a public key
    [InlineData("")]
    [InlineData(null)]
    public void Invalid_public_keys_are_refused(string? key)
    {
        Assert.False(NKeys.IsValidPublicUserKey(key));
        Assert.False(NKeys.Verify(key, [], new byte[64]));
    }

    [Fact]
    public void Account_key_is_a_public_key_but_not_a_user_key()
    {
        using var account = SeededKeyPair.Create([.. Enumerable.Range(0, 32).Select(i => (byte)i)], PrefixByte.Account);
        var key = account.GetPublicKey();
        Assert.StartsWith("A", key);
        Assert.True(NKeys.IsValidPublicAccountKey(key));
        Assert.False(NKeys.IsValidPublicUserKey(key));
        Assert.False(NKeys.IsValidPublicAccountKey(Public));
    }
}
