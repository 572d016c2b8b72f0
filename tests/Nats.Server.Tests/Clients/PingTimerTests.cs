using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class PingTimerTests
{
    private static readonly TimeSpan Interval = TimeSpan.FromMinutes(2);

    [Fact]
    public void NothingIsDue_BeforeTheFirstPingIsScheduled()
    {
        var timer = new PingTimer(now: 1000);
        Assert.Equal(PingAction.None, timer.Check(1_000_000, Interval, maxPingsOut: 2));
    }

    [Fact]
    public void FirstPing_IsDueWithinTwoSecondsPlusJitter_EvenWithRecentTraffic()
    {
        var timer = new PingTimer(now: 0);
        timer.ScheduleFirstPing(0, Interval);
        Assert.InRange(timer.NextPingTicks, 2000, 2400);
        Assert.Equal(PingAction.None, timer.Check(1999, Interval, 2));

        timer.NoteActivity(2400);
        timer.OnPingReceived(2400);
        Assert.Equal(PingAction.SendPing, timer.Check(2400, Interval, 2));
        Assert.Equal(1, timer.PingsOut);
        Assert.Equal(2400 + (long)Interval.TotalMilliseconds, timer.NextPingTicks);
    }

    [Fact]
    public void FirstPing_UsesTheConfiguredInterval_WhenShorterThanTwoSeconds()
    {
        var timer = new PingTimer(now: 0);
        timer.ScheduleFirstPing(0, TimeSpan.FromMilliseconds(500));
        Assert.InRange(timer.NextPingTicks, 500, 600);
    }

    [Fact]
    public void LaterPings_ArePostponedByTrafficEitherWay()
    {
        var interval = (long)Interval.TotalMilliseconds;
        var timer = new PingTimer(now: 0);
        timer.ScheduleFirstPing(0, Interval);
        var first = timer.NextPingTicks;
        Assert.Equal(PingAction.SendPing, timer.Check(first, Interval, 2));
        timer.OnPong();

        var second = timer.NextPingTicks;
        timer.NoteActivity(second - 10);
        Assert.Equal(PingAction.None, timer.Check(second, Interval, 2));
        Assert.Equal(second + interval, timer.NextPingTicks);

        var third = timer.NextPingTicks;
        timer.OnPingReceived(third - 10);
        Assert.Equal(PingAction.None, timer.Check(third, Interval, 2));

        var fourth = timer.NextPingTicks;
        Assert.Equal(PingAction.SendPing, timer.Check(fourth, Interval, 2));
    }

    [Fact]
    public void UnansweredPings_PastTheLimit_MakeTheConnectionStale()
    {
        var timer = new PingTimer(now: 0);
        timer.ScheduleFirstPing(0, Interval);
        Assert.Equal(PingAction.SendPing, timer.Check(timer.NextPingTicks, Interval, maxPingsOut: 2));
        Assert.Equal(PingAction.SendPing, timer.Check(timer.NextPingTicks, Interval, maxPingsOut: 2));
        Assert.Equal(2, timer.PingsOut);
        Assert.Equal(PingAction.Stale, timer.Check(timer.NextPingTicks, Interval, maxPingsOut: 2));
    }

    [Fact]
    public void Pong_ClearsOutstandingPings_AndMeasuresTheRoundTrip()
    {
        var timer = new PingTimer(now: 0);
        timer.ScheduleFirstPing(0, Interval);
        Assert.Equal(TimeSpan.Zero, timer.Rtt);
        Assert.Equal(PingAction.SendPing, timer.Check(timer.NextPingTicks, Interval, 1));
        timer.OnPong();
        Assert.Equal(0, timer.PingsOut);
        Assert.True(timer.Rtt > TimeSpan.Zero);
        Assert.Equal(PingAction.SendPing, timer.Check(timer.NextPingTicks, Interval, 1));
    }

    [Fact]
    public void Pong_WithoutAPing_LeavesTheEstimateAlone()
    {
        var timer = new PingTimer(now: 0);
        timer.EstimateRttAtConnect(DateTime.UtcNow.AddMilliseconds(-5));
        var estimate = timer.Rtt;
        Assert.True(estimate >= TimeSpan.FromMilliseconds(5));
        timer.OnPong();
        Assert.Equal(estimate, timer.Rtt);
    }
}
