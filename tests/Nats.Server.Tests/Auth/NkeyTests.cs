using System.Text;
using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

/// <summary>Vectors from the nats.js nkeys library (@nats-io/nkeys 2.0.3) and RFC 8032.</summary>
public sealed class NkeyTests
{
    private const string Seed = "SUADI37IG7T4RJFKKSPJ7566JGBFMZV6H37EJWM4WUBHCP56BNM7Z7JNCM";
    private const string Public = "UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAR";
    private const string Nonce = "abcdefghijklmno";
    private const string Signature = "pK5YwOXzUe-fr-Jwqq01hpwhjH_F87gac5A8Woz6jr3uu7hE4W32neovNLYH8pfDYoQ9tf5bFoWXE7IQNsKwDw";

    [Fact]
    public void Verifies_a_nats_js_signature()
    {
        Assert.True(NKeys.TryDecodePublicKey(Public, out var prefix, out var key));
        Assert.Equal(NKeys.PrefixUser, prefix);
        var sig = Convert.FromBase64String(Signature.Replace('-', '+').Replace('_', '/') + "==");
        Assert.True(Ed25519.Verify(key, Encoding.ASCII.GetBytes(Nonce), sig));
        Assert.False(Ed25519.Verify(key, Encoding.ASCII.GetBytes(Nonce + "x"), sig));
        sig[5] ^= 1;
        Assert.False(Ed25519.Verify(key, Encoding.ASCII.GetBytes(Nonce), sig));
    }

    [Fact]
    public void Seed_derives_the_public_key_and_signs_like_nats_js()
    {
        Assert.True(NKeys.TryDecodeSeed(Seed, out var prefix, out var seed));
        Assert.Equal(NKeys.PrefixUser, prefix);
        var publicKey = Ed25519.PublicKeyFromSeed(seed);
        Assert.Equal(Public, NKeys.EncodePublicKey(NKeys.PrefixUser, publicKey));
        Assert.Equal(Seed, NKeys.EncodeSeed(NKeys.PrefixUser, seed));
        var sig = Ed25519.Sign(seed, Encoding.ASCII.GetBytes(Nonce));
        Assert.Equal(Signature, Convert.ToBase64String(sig).TrimEnd('=').Replace('+', '-').Replace('/', '_'));
    }

    [Fact]
    public void Rfc8032_test_vector_1()
    {
        var seed = Convert.FromHexString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        var publicKey = Convert.FromHexString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        var sig = Convert.FromHexString("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        Assert.Equal(publicKey, Ed25519.PublicKeyFromSeed(seed));
        Assert.Equal(sig, Ed25519.Sign(seed, []));
        Assert.True(Ed25519.Verify(publicKey, [], sig));
    }

    [Fact]
    public void Signature_with_high_bits_or_wrong_length_is_refused()
    {
        Assert.True(NKeys.TryDecodeSeed(Seed, out _, out var seed));
        var publicKey = Ed25519.PublicKeyFromSeed(seed);
        var sig = Ed25519.Sign(seed, "m"u8);
        Assert.True(Ed25519.Verify(publicKey, "m"u8, sig));
        var high = (byte[])sig.Clone();
        high[63] |= 0x80;
        Assert.False(Ed25519.Verify(publicKey, "m"u8, high));
        Assert.False(Ed25519.Verify(publicKey, "m"u8, sig[..63]));
    }

    [Theory]
    [InlineData("UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAS")] // CRC mismatch
    [InlineData("UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVA")] // truncated
    [InlineData("ud7gdmlp62qes2bsxths32tukqciyquny6wsf4wxfyczevttaqcmjvar")] // lower case is not base32 here
    [InlineData(Seed)] // a seed is not a public key
    [InlineData("")]
    public void Invalid_public_keys_are_refused(string key) => Assert.False(NKeys.IsValidPublicUserKey(key));

    [Fact]
    public void Account_key_is_a_public_key_but_not_a_user_key()
    {
        Assert.True(NKeys.TryDecodeSeed(Seed, out _, out var seed));
        var account = NKeys.EncodePublicKey(NKeys.PrefixAccount, Ed25519.PublicKeyFromSeed(seed));
        Assert.StartsWith("A", account);
        Assert.True(NKeys.TryDecodePublicKey(account, out _, out _));
        Assert.False(NKeys.IsValidPublicUserKey(account));
    }
}
