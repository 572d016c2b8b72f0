using System.Text;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.Tests.JetStream.Consumers;

public class ConsumerProtocolTests
{
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
