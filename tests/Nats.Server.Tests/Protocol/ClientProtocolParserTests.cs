using System.Text;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Protocol;

public class ClientProtocolParserTests
{
    private static readonly ParserLimits DefaultLimits = new(MaxControlLine: 4096, MaxPayload: 1024 * 1024, HeadersEnabled: true, AwaitingAuth: false);

    private const string MixedStream =
        "CONNECT {\"verbose\":false,\"headers\":true}\r\n" +
        "SUB foo.* 1\r\n" +
        "sub\tbar  q1\t2\r\n" +
        "PUB foo.bar 5\r\nhello\r\n" +
        "pub foo.baz _INBOX.abc 0\r\n\r\n" +
        "HPUB foo.h 12 17\r\nNATS/1.0\r\n\r\nworld\r\n" +
        "HPUB foo.h reply.x 12 12\r\nNATS/1.0\r\n\r\n\r\n" +
        "PING\r\n" +
        "PONG\r\n" +
        "UNSUB 1\r\n" +
        "UNSUB 2 10\r\n" +
        "+OK\r\n" +
        "PUB binary 4\r\n\r\n\r\n\r\n" +
        "INFO {}\r\n";

    private static List<string> ParseAll(string stream, ParserLimits? limits = null)
    {
        var driver = new ParserDriver(limits ?? DefaultLimits);
        driver.Feed(Encoding.UTF8.GetBytes(stream));
        return driver.Events;
    }

    [Fact]
    public void MixedStream_ParsesEveryCommand()
    {
        var events = ParseAll(MixedStream);
        Assert.Equal(
        [
            "Connect {\"verbose\":false,\"headers\":true}",
            "Sub subject=foo.* queue=- sid=1",
            "Sub subject=bar queue=q1 sid=2",
            "Pub subject=foo.bar reply=- hdr=-1 payload=hello",
            "Pub subject=foo.baz reply=_INBOX.abc hdr=-1 payload=",
            "HPub subject=foo.h reply=- hdr=12 payload=NATS/1.0\r\n\r\nworld",
            "HPub subject=foo.h reply=reply.x hdr=12 payload=NATS/1.0\r\n\r\n",
            "Ping",
            "Pong",
            "Unsub sid=1 max=-1",
            "Unsub sid=2 max=10",
            "Ok",
            "Pub subject=binary reply=- hdr=-1 payload=\r\n\r\n",
            "Info {}",
        ], events);
    }

    [Fact]
    public void MixedStream_SplitAtEveryByteBoundary_GivesTheSameCommands()
    {
        var expected = ParseAll(MixedStream);
        var bytes = Encoding.UTF8.GetBytes(MixedStream);
        for (var split = 1; split < bytes.Length; split++)
        {
            var driver = new ParserDriver(DefaultLimits);
            driver.Feed(bytes.AsSpan(0, split));
            driver.Feed(bytes.AsSpan(split));
            Assert.True(expected.SequenceEqual(driver.Events), $"split at {split}: {string.Join(" | ", driver.Events)}");
        }
    }

    [Fact]
    public void MixedStream_FedOneByteAtATime_GivesTheSameCommands()
    {
        var expected = ParseAll(MixedStream);
        var driver = new ParserDriver(DefaultLimits);
        foreach (var b in Encoding.UTF8.GetBytes(MixedStream))
        {
            driver.Feed([b]);
        }
        Assert.Equal(expected, driver.Events);
    }

    [Theory]
    [InlineData("FOO\r\n", "ERROR UnknownOperation")]
    [InlineData("\r\n", "ERROR UnknownOperation")]
    [InlineData("PIN\r\n", "ERROR UnknownOperation")]
    [InlineData("PUBX foo 1\r\n", "ERROR UnknownOperation")]
    [InlineData("SUB\r\n", "ERROR UnknownOperation")]
    [InlineData("MSG foo 1 1\r\n", "ERROR UnknownOperation")]
    [InlineData("PUB foo 1\r\nab\r\n", "ERROR UnknownOperation")]
    [InlineData("PUB foo\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB foo bar baz 1\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB foo -1\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB foo x\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB foo 1234567890\r\n", "ERROR ProtocolViolation")]
    [InlineData("HPUB foo 5 2\r\n", "ERROR ProtocolViolation")]
    [InlineData("HPUB foo 2\r\n", "ERROR ProtocolViolation")]
    [InlineData("SUB foo\r\n", "ERROR ProtocolViolation")]
    [InlineData("SUB a b c d\r\n", "ERROR ProtocolViolation")]
    [InlineData("UNSUB\t\r\n", "ERROR ProtocolViolation")]
    [InlineData("UNSUB 1 2 3\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB foo 2000000\r\n", "ERROR MaxPayload")]
    public void MalformedCommands_FailLikeTheGoServer(string input, string expected)
    {
        var events = ParseAll(input);
        Assert.Equal(expected, Assert.Single(events));
    }

    [Fact]
    public void UnknownVerb_FailsBeforeTheLineEnds()
    {
        Assert.Equal(["ERROR UnknownOperation"], ParseAll("X"));
        Assert.Equal(["ERROR UnknownOperation"], ParseAll("PUX"));
        Assert.Empty(ParseAll("PU"));
    }

    [Fact]
    public void OversizePayload_FailsOnTheControlLineAlone()
    {
        Assert.Equal(["ERROR MaxPayload"], ParseAll("PUB foo 11\r\n", DefaultLimits with { MaxPayload = 10 }));
    }

    [Fact]
    public void ControlLineOverLimit_FailsWithOrWithoutNewline()
    {
        var limits = DefaultLimits with { MaxControlLine = 16 };
        Assert.Equal(["ERROR MaxControlLine"], ParseAll("SUB " + new string('a', 20) + " 1\r\n", limits));
        Assert.Equal(["ERROR MaxControlLine"], ParseAll("SUB " + new string('a', 20), limits));
        Assert.Equal(["Sub subject=aaaaaaaaaaaaa sid=1".Replace("sid", "queue=- sid")], ParseAll("SUB aaaaaaaaaaaaa 1\r\n", limits));
    }

    [Fact]
    public void AwaitingAuth_OnlyConnectIsAccepted()
    {
        var limits = DefaultLimits with { AwaitingAuth = true };
        Assert.Equal(["ERROR AuthorizationViolation"], ParseAll("PING\r\n", limits));
        Assert.Equal(["Connect {}"], ParseAll("connect {}\r\n", limits));
    }

    [Fact]
    public void HeaderPublish_WithoutHeadersNegotiated_IsAViolation()
    {
        Assert.Equal(["ERROR ProtocolViolation"], ParseAll("HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", DefaultLimits with { HeadersEnabled = false }));
    }

    [Fact]
    public void PingWithTrailingBytes_IsStillAPing()
    {
        Assert.Equal(["Ping", "Pong"], ParseAll("PINGX\r\nPONG whatever\r\n"));
    }

    [Fact]
    public void IncompletePayload_ReportsTheTotalLengthNeeded()
    {
        var bytes = Encoding.ASCII.GetBytes("PUB foo 100\r\nabc");
        var status = ClientProtocolParser.TryParse(bytes, DefaultLimits, out _, out _, out var needed, out _);
        Assert.Equal(ParseStatus.NeedMoreData, status);
        Assert.Equal("PUB foo 100\r\n".Length + 100 + 2, needed);
    }

    [Theory]
    [InlineData("0", 0)]
    [InlineData("123", 123)]
    [InlineData("999999999", 999999999)]
    [InlineData("", -1)]
    [InlineData("1234567890", -1)]
    [InlineData("12a", -1)]
    [InlineData("-5", -1)]
    public void ParseSize_AcceptsOnlyOneToNineDigits(string input, int expected)
    {
        Assert.Equal(expected, ClientProtocolParser.ParseSize(Encoding.ASCII.GetBytes(input)));
    }
}
