using System.Text;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Protocol;

public class ConnectOptionsTests
{
    [Fact]
    public void EmptyConnect_KeepsGoDefaults()
    {
        var options = new ConnectOptions();
        Assert.True(options.TryApply("{}"u8));
        Assert.True(options.Verbose);
        Assert.True(options.Pedantic);
        Assert.True(options.Echo);
        Assert.False(options.Headers);
    }

    [Fact]
    public void Connect_OverlaysOnlyTheFieldsItNames()
    {
        var options = new ConnectOptions();
        Assert.True(options.TryApply(Encoding.UTF8.GetBytes("{\"verbose\":false,\"name\":\"n\",\"lang\":\"go\",\"version\":\"1.2\",\"protocol\":1,\"headers\":true,\"extra\":[1,{\"a\":2}]}")));
        Assert.False(options.Verbose);
        Assert.True(options.Pedantic);
        Assert.Equal("n", options.Name);
        Assert.Equal(1, options.Protocol);
        Assert.True(options.Headers);
        Assert.True(options.TryApply("{\"pedantic\":false}"u8));
        Assert.False(options.Verbose);
        Assert.False(options.Pedantic);
    }

    [Fact]
    public void FieldNames_MatchCaseInsensitively_LikeEncodingJson()
    {
        var options = new ConnectOptions();
        Assert.True(options.TryApply("{\"Verbose\":false}"u8));
        Assert.False(options.Verbose);
    }

    [Theory]
    [InlineData("")]
    [InlineData("{bad}")]
    [InlineData("[]")]
    [InlineData("{\"verbose\":\"yes\"}")]
    [InlineData("{\"protocol\":\"1\"}")]
    [InlineData("{} {}")]
    [InlineData("{\"name\":1}")]
    public void InvalidJson_IsRejected(string json)
    {
        Assert.False(new ConnectOptions().TryApply(Encoding.UTF8.GetBytes(json)));
    }
}
