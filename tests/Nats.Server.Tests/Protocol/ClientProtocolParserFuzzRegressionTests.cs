using System.Text;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Protocol;

/// <summary>
/// Inputs the protocol fuzz target (fuzz/Nats.Fuzz, ProtocolTarget) found, with the Go server's answer to each
/// (checked against nats-server 2.9.10 on a socket).
/// </summary>
public class ClientProtocolParserFuzzRegressionTests
{
    private static readonly ParserLimits DefaultLimits = new(MaxControlLine: 4096, MaxPayload: 1024 * 1024, HeadersEnabled: true, AwaitingAuth: false);

    private static List<string> Parse(string stream, ParserLimits limits, int? split = null)
    {
        var bytes = Encoding.Latin1.GetBytes(stream);
        var driver = new ParserDriver(limits);
        var first = split ?? bytes.Length;
        driver.Feed(bytes.AsSpan(0, first));
        driver.Feed(bytes.AsSpan(first));
        return driver.Events;
    }

    [Fact]
    public void BareCrInsideTheLine_CountsOnceAgainstMaxControlLine_WhereverTheReadSplits()
    {
        // A 16-byte max_control_line and a line of 17 bytes before its newline, one of them a bare CR: Go drops one byte
        // for the CR (c.drop) before comparing, so the line is within the limit and fails on its arguments instead.
        var limits = DefaultLimits with { MaxControlLine = 16, HeadersEnabled = false };
        const string input = "PUB \t/o 9%\0\rfoo 12 12\r\nNATS/1.0ub";
        for (var split = 1; split <= input.Length; split++)
        {
            Assert.Equal(["ERROR ProtocolViolation"], Parse(input, limits, split));
        }
    }

    [Theory]
    // Go takes the line up to the newline less one byte when a CR came anywhere after its first argument byte:
    // "a\rb 1" here, so a one-byte payload that is not followed by CRLF.
    [InlineData("PUB a\rb 12\nhello world!\r\n", "ERROR UnknownOperation")]
    // "a\rb " (no size) and "a 1\r" (no size): closed without -ERR.
    [InlineData("PUB a\rb 1\nh\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB a 1\rx\nh\r\n", "ERROR ProtocolViolation")]
    [InlineData("PUB a 2\r\rx\nhi\r\n", "ERROR ProtocolViolation")]
    // The first byte after the spaces opens the arguments whatever it is, even a CR or a newline.
    [InlineData("PUB \r\n", "ERROR ProtocolViolation")]
    [InlineData("UNSUB 1 \r5\n", "Unsub sid=1 max=-1")]
    public void ControlLinesWithBareCarriageReturns_ParseAsTheGoServerDoes(string input, string expected)
    {
        Assert.Equal(expected, Parse(input, DefaultLimits)[0]);
    }

    [Fact]
    public void NewlineRightAfterTheSpaces_IsPartOfTheArguments()
    {
        // Go subscribes "b" with sid 3: the newline was taken as the first argument byte and SUB splits on it.
        Assert.Equal(["Sub subject=b queue=- sid=3"], Parse("SUB \nb 3\n", DefaultLimits));
    }

    [Theory]
    [InlineData("PING", 16, "Ping")]
    [InlineData("PONG", 16, "Pong")]
    [InlineData("+OK", 16, "Ok")]
    [InlineData("PING", 17, "ERROR MaxControlLine")]
    [InlineData("PONG", 63, "ERROR MaxControlLine")]
    [InlineData("+OK", 17, "ERROR MaxControlLine")]
    public void BytesAfterABareVerb_AreBoundedTheSameWhereverTheReadSplits(string verb, int extra, string expected)
    {
        // Go drops what follows PING/PONG/+OK up to the newline, however much; a stateless parser cannot drop bytes
        // it has not parsed a command from, so it bounds them by max_control_line, measured the same way whether
        // the newline has arrived or not (before, only a read that ended before the newline was bounded).
        var limits = DefaultLimits with { MaxControlLine = 16 };
        var input = verb + new string('g', extra - 1) + "\r\n";
        for (var split = 1; split <= input.Length; split++)
        {
            Assert.Equal(expected, Parse(input, limits, split)[0]);
        }
    }
}
