using System.Text;
using Nats.Server.Accounts.SystemEvents;

namespace Nats.Server.Tests.Accounts.SystemEvents;

public sealed class RequestOptionsTests
{
    private static readonly Dictionary<string, OptionKind> Fields = new()
    {
        ["subscriptions"] = OptionKind.Bool,
        ["offset"] = OptionKind.Int,
        ["cid"] = OptionKind.UInt,
        ["acc"] = OptionKind.String,
        ["accounts"] = OptionKind.StringArray,
    };

    private static RequestOptions Parse(string json)
    {
        Assert.True(RequestOptions.TryParse(Encoding.UTF8.GetBytes(json), "ConnzEventOptions", Fields, out var options, out var error), error);
        return options;
    }

    private static string Error(string json)
    {
        Assert.False(RequestOptions.TryParse(Encoding.UTF8.GetBytes(json), "ConnzEventOptions", Fields, out _, out var error));
        return error;
    }

    [Fact]
    public void ReadsTypedFields_AndTheFilterFields()
    {
        var options = Parse("{\"subscriptions\":true,\"offset\":3,\"cid\":18446744073709551615,\"acc\":\"A\",\"accounts\":[\"x\",\"y\"],\"server_name\":\"n1\",\"tags\":[\"t\"]}");
        Assert.True(options.Bool("subscriptions"));
        Assert.Equal(3, options.Int("offset"));
        Assert.Equal(ulong.MaxValue, options.UInt("cid"));
        Assert.Equal("A", options.String("acc"));
        Assert.Equal(["x", "y"], options.Strings("accounts"));
        Assert.Equal("n1", options.String("server_name"));
        Assert.Equal(["t"], options.Strings("tags"));
    }

    [Fact]
    public void MatchesNamesCaseInsensitively_AndIgnoresUnknownFieldsAndNulls_LikeGo()
    {
        var options = Parse("{\"Subscriptions\":true,\"OFFSET\":2,\"unknown\":{\"deep\":[1]},\"acc\":null}");
        Assert.True(options.Bool("subscriptions"));
        Assert.Equal(2, options.Int("offset"));
        Assert.Equal("", options.String("acc"));
        Assert.False(Parse("null").Bool("subscriptions"));
    }

    [Theory]
    [InlineData("{\"subscriptions\":\"yes\"}", "json: cannot unmarshal string into Go struct field ConnzEventOptions.subscriptions of type bool")]
    [InlineData("{\"offset\":1.5}", "json: cannot unmarshal number 1.5 into Go struct field ConnzEventOptions.offset of type int")]
    [InlineData("{\"cid\":-1}", "json: cannot unmarshal number -1 into Go struct field ConnzEventOptions.cid of type uint64")]
    [InlineData("{\"acc\":7}", "json: cannot unmarshal number into Go struct field ConnzEventOptions.acc of type string")]
    [InlineData("{\"subscriptions\":1}", "json: cannot unmarshal number into Go struct field ConnzEventOptions.subscriptions of type bool")]
    [InlineData("[1]", "json: cannot unmarshal array into Go value of type server.ConnzEventOptions")]
    [InlineData("{bad", "invalid character 'b' looking for beginning of object key string")]
    [InlineData("{\"acc\":", "unexpected end of JSON input")]
    public void WrongTypesAndSyntax_GiveGoTexts(string json, string expected) => Assert.Equal(expected, Error(json));
}
