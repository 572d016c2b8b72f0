using System.Text;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.Tests.JetStream.Consumers;

public class ConsumerProtocolTests
{
    [Theory]
    [InlineData("5s", 5_000_000_000L)]
    [InlineData("150ms", 150_000_000L)]
    [InlineData("1m30s", 90_000_000_000L)]
    [InlineData("1.5h", 5_400_000_000_000L)]
    [InlineData("2us", 2_000L)]
    [InlineData("0", 0L)]
    public void ParsesGoDurations(string text, long nanos)
    {
        Assert.True(GoDuration.TryParse(text, out var parsed));
        Assert.Equal(nanos, parsed);
    }

    [Theory]
    [InlineData("")]
    [InlineData("5")]
    [InlineData("5 seconds")]
    [InlineData("abc")]
    public void RefusesWhatGoRefuses(string text) => Assert.False(GoDuration.TryParse(text, out _));

    [Theory]
    [InlineData(2_000_000_000L, "2s")]
    [InlineData(1_500_000_000L, "1.5s")]
    [InlineData(90_000_000_000L, "1m30s")]
    [InlineData(3_600_000_000_000L, "1h0m0s")]
    [InlineData(250_000_000L, "250ms")]
    [InlineData(0L, "0s")]
    public void FormatsAsGoDurationString(long nanos, string text) => Assert.Equal(text, GoDuration.Format(nanos));

    [Fact]
    public void ParsesTheAckReplySubject()
    {
        var (sseq, dseq, dc) = AckSubject.Parse("$JS.ACK.ORDERS.worker.3.17.42.1795298185380846095.9"u8);
        Assert.Equal((17UL, 42UL, 3UL), (sseq, dseq, dc));
    }

    [Theory]
    [InlineData("$JS.ACK.S.C.1.2.3.4")]
    [InlineData("$JS.ACK.S.C.1.2.3.4.5.6")]
    public void AckSubjectsWithTheWrongTokenCountAreNotAcks(string subject) =>
        Assert.Equal((0UL, 0UL, 0UL), AckSubject.Parse(Encoding.ASCII.GetBytes(subject)));

    [Fact]
    public void AnUnparsableTokenReadsAsZero() =>
        Assert.Equal((2UL, 3UL, 0UL), AckSubject.Parse("$JS.ACK.S.C.x.2.3.4.5"u8));

    [Fact]
    public void PullRequestBodies()
    {
        Assert.True(PullRequest.TryParse(""u8, 1000, out var batch, out _, out _, out _, out _, out _));
        Assert.Equal(1, batch);
        Assert.True(PullRequest.TryParse("25"u8, 1000, out batch, out _, out _, out _, out _, out _));
        Assert.Equal(25, batch);
        Assert.True(PullRequest.TryParse("""{"batch":10,"expires":2000000000,"no_wait":true,"max_bytes":64,"idle_heartbeat":500000000}"""u8,
            1000, out batch, out var maxBytes, out var noWait, out var expires, out var heartbeat, out _));
        Assert.Equal((10, 64, true, 3000L, 500L), (batch, maxBytes, noWait, expires, heartbeat));
        Assert.False(PullRequest.TryParse("""{"expires":1000000000,"idle_heartbeat":800000000}"""u8, 0, out _, out _, out _, out _, out _, out var error));
        Assert.Equal("heartbeat value too large", error);
        Assert.False(PullRequest.TryParse("{bad"u8, 0, out _, out _, out _, out _, out _, out _));
    }
}
