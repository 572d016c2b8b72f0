using System.Text;
using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

/// <summary>Expected values are what Go's fmt.Sprintf("%q", []byte(...)) prints.</summary>
public sealed class GoQuoteTests
{
    [Theory]
    [InlineData("foo.bar", "\"foo.bar\"")]
    [InlineData("a\"b", "\"a\\\"b\"")]
    [InlineData("a\\b", "\"a\\\\b\"")]
    [InlineData("a\u0001b", "\"a\\x01b\"")]
    [InlineData("tab\there", "\"tab\\there\"")]
    [InlineData("café", "\"café\"")]
    [InlineData("\u007f", "\"\\x7f\"")]
    [InlineData("\u200b", "\"\\u200b\"")]
    public void Quotes_like_go(string input, string expected) => Assert.Equal(expected, GoQuote.Quote(Encoding.UTF8.GetBytes(input)));

    [Fact]
    public void Invalid_utf8_bytes_are_hex_escaped() => Assert.Equal("\"bad\\xff\"", GoQuote.Quote([(byte)'b', (byte)'a', (byte)'d', 0xFF]));
}
