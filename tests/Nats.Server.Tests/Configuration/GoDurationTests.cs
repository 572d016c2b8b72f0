using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class GoDurationTests
{
    [Theory]
    [InlineData("0", 0)]
    [InlineData("1s", 1_000)]
    [InlineData("2m", 120_000)]
    [InlineData("1h", 3_600_000)]
    [InlineData("1h30m", 5_400_000)]
    [InlineData("1.5s", 1_500)]
    [InlineData("500ms", 500)]
    [InlineData("-3s", -3_000)]
    [InlineData("+3s", 3_000)]
    [InlineData("2m30s", 150_000)]
    [InlineData(".5s", 500)]
    public void ParsesGoDurations(string text, long millis) =>
        Assert.Equal(TimeSpan.FromMilliseconds(millis), GoDuration.Parse(text));

    [Theory]
    [InlineData("100us", 1_000)]
    [InlineData("100µs", 1_000)]
    [InlineData("300ns", 3)]
    public void SubMillisecondUnits(string text, long ticks) => Assert.Equal(TimeSpan.FromTicks(ticks), GoDuration.Parse(text));

    [Theory]
    [InlineData("", "time: invalid duration \"\"")]
    [InlineData("abc", "time: invalid duration \"abc\"")]
    [InlineData("1", "time: missing unit in duration \"1\"")]
    [InlineData("1d", "time: unknown unit \"d\" in duration \"1d\"")]
    [InlineData(".s", "time: invalid duration \".s\"")]
    public void RejectsWithGoMessages(string text, string message)
    {
        Assert.False(GoDuration.TryParse(text, out _, out var error));
        Assert.Equal(message, error);
    }

    [Fact]
    public void EmptyFractionIsAcceptedLikeGo() => Assert.Equal(TimeSpan.FromSeconds(1), GoDuration.Parse("1.s"));

    [Theory]
    [InlineData(120_000, "2m0s")]
    [InlineData(10_000, "10s")]
    [InlineData(1_500, "1.5s")]
    [InlineData(3_600_000, "1h0m0s")]
    [InlineData(250, "250ms")]
    [InlineData(0, "0s")]
    public void FormatsLikeGo(long millis, string expected) => Assert.Equal(expected, GoDuration.Format(TimeSpan.FromMilliseconds(millis)));

    [Theory]
    [InlineData("5s", 5_000_000_000L)]
    [InlineData("150ms", 150_000_000L)]
    [InlineData("1m30s", 90_000_000_000L)]
    [InlineData("1.5h", 5_400_000_000_000L)]
    [InlineData("2us", 2_000L)]
    [InlineData("7ns", 7L)]
    [InlineData("0", 0L)]
    public void ParsesNanoseconds(string text, long nanos)
    {
        Assert.True(GoDuration.TryParseNanos(text, out var parsed, out _));
        Assert.Equal(nanos, parsed);
    }

    [Theory]
    [InlineData("")]
    [InlineData("5")]
    [InlineData("5 seconds")]
    [InlineData("abc")]
    public void RefusesWhatGoRefusesInNanoseconds(string text) => Assert.False(GoDuration.TryParseNanos(text, out _, out _));

    [Theory]
    [InlineData(2_000_000_000L, "2s")]
    [InlineData(1_500_000_000L, "1.5s")]
    [InlineData(90_000_000_000L, "1m30s")]
    [InlineData(3_600_000_000_000L, "1h0m0s")]
    [InlineData(250_000_000L, "250ms")]
    [InlineData(1_500L, "1.5µs")]
    [InlineData(7L, "7ns")]
    [InlineData(-1_500_000_000L, "-1.5s")]
    [InlineData(0L, "0s")]
    public void FormatsNanosecondsAsGoDurationString(long nanos, string text) => Assert.Equal(text, GoDuration.FormatNanos(nanos));
}
