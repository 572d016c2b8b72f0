using System.Security.Cryptography;
using System.Text;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Hosting;

public sealed class NameHashTests
{
    [Fact]
    public void KnownGoHash()
    {
        // Seen on a Go 2.9.10 server: its inbox subscription was $SYS._INBOX.DP0KDFLn.* for this name.
        Assert.Equal("DP0KDFLn", NameHash.Of("NDERCCVCMPPOOG6HZNOU3G5VT3PZ7AH5FFLSKSQO2YALDIH7SUFNHTYM"));
    }

    [Theory]
    [InlineData("")]
    [InlineData("a")]
    [InlineData("server-1")]
    [InlineData("ünïcødé name")]
    [InlineData("a name longer than one 64-byte SHA-256 block, so the digest processes two blocks of input")]
    public void MatchesTheFrameworkSha256(string name)
    {
        // The managed digest must give exactly what System.Security.Cryptography's SHA-256 gives.
        const string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        var sha = SHA256.HashData(Encoding.UTF8.GetBytes(name));
        var expected = new string(sha.AsSpan(0, 8).ToArray().Select(b => digits[b % digits.Length]).ToArray());
        Assert.Equal(expected, NameHash.Of(name));
    }
}
