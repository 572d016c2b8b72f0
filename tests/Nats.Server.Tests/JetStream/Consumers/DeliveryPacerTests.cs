using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.Tests.JetStream.Consumers;

/// <summary>The pacing arithmetic (Go's replay gaps and x/time/rate bucket) and sample_freq parsing; waits are
/// bounded only in the direction a busy machine cannot break (time passing only shortens a wait).</summary>
public class DeliveryPacerTests
{
    private static ConsumerConfig Config(ReplayPolicy replay = ReplayPolicy.Instant, ulong bps = 0) =>
        new() { ReplayPolicy = replay, RateLimit = bps };

    [Fact]
    public void InstantWithoutRateNeverWaits()
    {
        var pacer = new DeliveryPacer();
        pacer.Start(Config(), lastSeq: 10, burst: 1024);
        Assert.Equal(0, pacer.DelayMillis(1, 1, 1_000_000_000, 100));
        Assert.Equal(0, pacer.DelayMillis(2, 1, 9_000_000_000, 100));
    }

    [Fact]
    public void ReplayWaitsTheGapBetweenStoredTimestampsUntilCaughtUp()
    {
        var pacer = new DeliveryPacer();
        pacer.Start(Config(ReplayPolicy.Original), lastSeq: 3, burst: 1024);
        Assert.Equal(0, pacer.DelayMillis(1, 1, 1_000_000_000, 10));
        // Less than a millisecond apart: Go does not wait.
        Assert.Equal(0, pacer.DelayMillis(2, 1, 1_000_500_000, 10));
        var wait = pacer.DelayMillis(3, 1, 61_000_500_000, 10);
        Assert.InRange(wait, 1, 60_000);
        Assert.True(wait > 30_000, $"a 60 s gap waits about 60 s, not {wait} ms");
        // Asking again for the held message waits out the rest, not a new gap.
        Assert.InRange(pacer.DelayMillis(3, 1, 61_000_500_000, 10), 1, wait);
        // Past the last sequence at start, replay ends: later messages go out at once.
        pacer.Idle(4);
        Assert.Equal(0, pacer.DelayMillis(4, 1, 999_000_000_000, 10));
    }

    [Fact]
    public void RateLimitSpendsTheBurstThenWaitsForTokens()
    {
        var pacer = new DeliveryPacer();
        pacer.Start(Config(bps: 8_000), lastSeq: 0, burst: 1_000); // 1000 B/s
        Assert.Equal(0, pacer.DelayMillis(1, 1, 0, 600));
        Assert.Equal(0, pacer.DelayMillis(2, 1, 0, 400));
        var wait = pacer.DelayMillis(3, 1, 0, 100_000);
        Assert.True(wait > 50_000, $"100 kB beyond the burst at 1000 B/s waits about 100 s, not {wait} ms");
        Assert.InRange(pacer.DelayMillis(3, 1, 0, 100_000), 1, wait);
        // With the limit lifted (a config update), messages go out at once.
        pacer.SetRate(0, 1_000);
        Assert.Equal(0, pacer.DelayMillis(4, 1, 0, 100_000));
    }

    [Theory]
    [InlineData("50%", 50)]
    [InlineData("50", 50)]
    [InlineData("100%", 100)]
    [InlineData("+7", 7)]
    [InlineData("0", 0)]
    public void ParsesSampleFrequencyAsGo(string text, int percent) => Assert.Equal(percent, JsConsumer.SampleFrequency(text));

    [Fact]
    public void SamplesNoneAtZeroAndAllFromAHundred()
    {
        for (var i = 0; i < 1000; i++)
        {
            Assert.False(JsConsumer.ShouldSample(0));
            Assert.True(JsConsumer.ShouldSample(100));
            Assert.True(JsConsumer.ShouldSample(250));
        }
        // Go samples rand.Int31n(100) <= 50: about half. Bounds far outside any plausible run.
        var sampled = Enumerable.Range(0, 10_000).Count(_ => JsConsumer.ShouldSample(50));
        Assert.InRange(sampled, 3_000, 7_000);
    }
}
